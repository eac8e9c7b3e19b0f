#include "models/stack_model.h"

#include "core/analysis/user_code.h"

#include "models/display.h"
#include "models/table_model.h"

namespace lockscope::gui {
namespace {

// Top-level rows carry id 0; a frame row carries its stack's row + 1.
constexpr quintptr kTopLevel = 0;

QString function_of(const std::string& frame)
{
    QString f = QString::fromStdString(frame);
    int plus = f.indexOf('+');
    return plus > 0 ? f.left(plus) : f;
}

bool lock_internal(const QString& function)
{
    // Frames of the locking and scheduling code itself: the same in every
    // stack of a lock kind, so they say nothing about who waited.
    // Also the probe's own frames: the BPF trampoline (an unsymbolized
    // address) and the tracepoint glue above the lock.
    if (function.startsWith(QLatin1String("0x")))
        return true;
    static const char* const prefixes[] = {
        "bpf_",         "__bpf",          "__traceiter", "trace_",           "perf_trace", "__mutex_lock",
        "mutex_lock",   "__down",         "down_",       "rwsem_",           "__rwsem",    "_raw_",
        "queued_",      "native_queued",  "__pv_queued", "pv_queued",        "do_raw_",    "osq_",
        "mutex_spin",   "schedule",       "__schedule",  "preempt_schedule", "rt_mutex",   "__rt_mutex",
        "rt_spin",      "percpu_down",    "__percpu",    "try_to_wake_up",   "wake_up",    "__wake_up",
        "mutex_unlock", "__mutex_unlock", "up_",         "rwsem_wake"};
    for (const char* p : prefixes)
        if (function.startsWith(QLatin1String(p)))
            return true;
    return false;
}

}  // namespace

StackModel::StackModel(QObject* parent) : QAbstractItemModel(parent) {}

void StackModel::setCountTitle(const QString& title)
{
    if (title == count_title_)
        return;
    count_title_ = title;
    emit headerDataChanged(Qt::Horizontal, Samples, Samples);
}

void StackModel::setStacks(std::vector<StackEntry> stacks)
{
    beginResetModel();
    stacks_ = std::move(stacks);
    total_samples_ = 0;
    for (const StackEntry& s : stacks_)
        total_samples_ += s.samples;
    endResetModel();
}

QString StackModel::summary(const StackEntry& stack)
{
    QStringList picked;
    for (const std::string& frame : stack.frames) {
        QString f = function_of(frame);
        if (picked.isEmpty() && lock_internal(f))
            continue;
        // The first frame keeps its offset: two call sites in one function
        // are different stacks and must not read alike.
        picked << (picked.isEmpty() ? QString::fromStdString(frame) : f);
        // Room for the user frames, where the waiters' own code is known.
        if (picked.size() == (stack.user_frames.empty() ? 3 : 2))
            break;
    }
    if (picked.isEmpty())
        for (size_t i = 0; i < stack.frames.size() && i < 3; ++i)
            picked << function_of(stack.frames[i]);
    // A user lock's waiter stack has user frames alone.
    QString text = picked.isEmpty() ? (stack.user_frames.empty() ? QStringLiteral("(no frames)") : QString())
                                    : picked.join(QStringLiteral(" ← "));
    // The waiters' own code: the first user frames above the kernel's.
    // The C library's wrappers (__libc_pwrite, __lll_lock_wait) skipped
    // where the program's own frames follow.
    size_t first = 0;
    while (first + 1 < stack.user_frames.size() && stack.user_frames[first].starts_with("__"))
        ++first;
    QStringList user;
    for (size_t i = first; i < stack.user_frames.size() && i < first + 2; ++i)
        user << QString::fromStdString(short_user_frame(stack.user_frames[i]));
    if (!user.isEmpty())
        text += (text.isEmpty() ? QString() : QStringLiteral(" ⇐ ")) + user.join(QStringLiteral(" ← "));
    return text;
}

QModelIndex StackModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kTopLevel);
    return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex StackModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kTopLevel)
        return {};
    return createIndex(int(child.internalId() - 1), 0, kTopLevel);
}

int StackModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return int(stacks_.size());
    if (parent.internalId() == kTopLevel && parent.column() == 0)
        return int(stacks_[size_t(parent.row())].frames.size() + stacks_[size_t(parent.row())].user_frames.size());
    return 0;
}

int StackModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant StackModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.internalId() != kTopLevel) {
        const StackEntry& s = stacks_[size_t(index.internalId() - 1)];
        if (index.column() != Frames)
            return {};
        // The kernel's frames, then the user frames above them, marked.
        const size_t row = size_t(index.row());
        const QString frame = row < s.frames.size() ? QString::fromStdString(s.frames[row])
                                                    : QStringLiteral("[user] ") +
                                                          QString::fromStdString(s.user_frames[row - s.frames.size()]);
        if (role == Qt::DisplayRole || role == SortRole || role == Qt::ToolTipRole)
            return frame;
        return {};
    }
    const StackEntry& s = stacks_[size_t(index.row())];
    const double share = total_samples_ ? double(s.samples) / double(total_samples_) : 0.0;
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case Frames:
                    return summary(s);
                // Entries that count nothing (a user lock's owners) say so.
                case Samples:
                    return total_samples_ ? display::count(s.samples) : QStringLiteral("–");
                case Share:
                    return total_samples_ ? display::percent(share) : QStringLiteral("–");
                case Wait:
                    return s.wait_ns ? display::duration(double(s.wait_ns)) : QStringLiteral("–");
            }
            break;
        case SortRole:
            switch (index.column()) {
                case Frames:
                    return summary(s);
                case Samples:
                    return qulonglong(s.samples);
                case Share:
                    return share;
                case Wait:
                    return qulonglong(s.wait_ns);
            }
            break;
        case Qt::ToolTipRole: {
            QStringList frames;
            for (const std::string& f : s.frames)
                frames << QString::fromStdString(f);
            for (const std::string& f : s.user_frames)
                frames << QStringLiteral("[user] ") + QString::fromStdString(f);
            return frames.join('\n');
        }
        case Qt::TextAlignmentRole:
            return TableModel::alignment(index.column() == Frames);
    }
    return {};
}

QVariant StackModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount || role != Qt::DisplayRole)
        return QAbstractItemModel::headerData(section, orientation, role);
    static const char* const titles[ColumnCount] = {"Stack (expand for frames)", "Samples", "Share", "Sampled wait"};
    if (section == Samples && !count_title_.isEmpty())
        return count_title_;
    return QString::fromUtf8(titles[section]);
}

}  // namespace lockscope::gui

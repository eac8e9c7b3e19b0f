#include "models/histogram_model.h"

#include "models/display.h"

#include <cmath>

namespace lockscope::gui {

HistogramModel::HistogramModel(QObject* parent) : TableModel({"Wait time", "Waits", "Share"}, parent) {}

void HistogramModel::setHistogram(const std::array<uint64_t, kHistBuckets>& hist)
{
    beginResetModel();
    hist_ = hist;
    int first = -1, last = -1;
    total_ = 0;
    for (int i = 0; i < kHistBuckets; ++i) {
        if (!hist[size_t(i)])
            continue;
        if (first < 0)
            first = i;
        last = i;
        total_ += hist[size_t(i)];
    }
    first_ = first < 0 ? 0 : first;
    count_ = first < 0 ? 0 : last - first + 1;
    endResetModel();
}

void HistogramModel::clear()
{
    setHistogram({});
}

int HistogramModel::rows() const
{
    return count_;
}

QString HistogramModel::bucketLabel(int bucket)
{
    return display::duration(std::ldexp(1.0, bucket));
}

QVariant HistogramModel::cell(const QModelIndex& index, int role) const
{
    const int bucket = first_ + index.row();
    const uint64_t n = hist_[size_t(bucket)];
    const double share = total_ ? double(n) / double(total_) : 0.0;
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case Range:
                    return bucket == kHistBuckets - 1
                               ? QStringLiteral("≥ %1").arg(bucketLabel(bucket))
                               : QStringLiteral("%1 – %2").arg(bucketLabel(bucket), bucketLabel(bucket + 1));
                case Count:
                    return display::count(n);
                case Share:
                    return display::percent(share);
            }
            break;
        case SortRole:
            switch (index.column()) {
                case Range:
                    return bucket;
                case Count:
                    return qulonglong(n);
                case Share:
                    return share;
            }
            break;
        case LowerBoundNsRole:
            return std::ldexp(1.0, bucket);
        case ShortLabelRole:
            return bucketLabel(bucket);
        case Qt::TextAlignmentRole:
            return alignment(false);
    }
    return {};
}

}  // namespace lockscope::gui

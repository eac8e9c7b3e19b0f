// The log2 wait-time histogram of a selection, trimmed to the buckets
// between the first and last non-empty one.
#pragma once

#include "core/model.h"

#include <QAbstractTableModel>

#include <array>

namespace lockscope::gui {

class HistogramModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Columns { Range, Count, Share, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1, LowerBoundNsRole, ShortLabelRole };

    explicit HistogramModel(QObject* parent = nullptr);

    void setHistogram(const std::array<uint64_t, kHistBuckets>& hist);
    void clear();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    // "1.02 µs" for bucket i's lower bound (2^i ns).
    static QString bucketLabel(int bucket);

private:
    std::array<uint64_t, kHistBuckets> hist_{};
    int first_ = 0, count_ = 0;
    uint64_t total_ = 0;
};

}  // namespace lockscope::gui

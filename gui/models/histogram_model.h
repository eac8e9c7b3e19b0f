// The log2 wait-time histogram of a selection, trimmed to the buckets
// between the first and last non-empty one.
#pragma once

#include "core/model.h"

#include "models/table_model.h"

#include <array>

namespace lockscope::gui {

class HistogramModel : public TableModel {
    Q_OBJECT
public:
    enum Columns { Range, Count, Share, ColumnCount };
    enum Roles { SortRole = Qt::UserRole + 1, LowerBoundNsRole, ShortLabelRole };

    explicit HistogramModel(QObject* parent = nullptr);

    void setHistogram(const std::array<uint64_t, kHistBuckets>& hist);
    void clear();

    // "1.02 µs" for bucket i's lower bound (2^i ns).
    static QString bucketLabel(int bucket);

private:
    int rows() const override;
    QVariant cell(const QModelIndex& index, int role) const override;
    std::array<uint64_t, kHistBuckets> hist_{};
    int first_ = 0, count_ = 0;
    uint64_t total_ = 0;
};

}  // namespace lockscope::gui

#include "runtime/operators/keyed_input_sorter.h"

#include "runtime/network/record_writer.h"

namespace sluice::runtime {

RowKeyedInputSorter::RowKeyedInputSorter(const types::RowType& input_type, std::vector<int> key_columns,
                                         sort::SorterOptions options, int32_t max_parallelism)
    : key_columns_(key_columns), max_parallelism_(max_parallelism),
      sorter_(input_type, std::move(key_columns), /*with_key_groups=*/true, std::move(options)) {}

void RowKeyedInputSorter::addRows(const types::RowBatch& batch) {
  hashKeys(batch, key_columns_, hashes_);
  groups_.resize(hashes_.size());
  for (size_t i = 0; i < hashes_.size(); ++i) groups_[i] = assignToKeyGroup(hashes_[i], max_parallelism_);
  sorter_.add(batch, groups_.data());
}

bool RowKeyedInputSorter::next(size_t max_records, StreamElement& out, const sort::SortBound* bound) {
  types::RowBatch rows;
  if (!sorter_.next(rows, max_records, bound)) return false;
  out = std::move(rows);
  return true;
}

}  // namespace sluice::runtime

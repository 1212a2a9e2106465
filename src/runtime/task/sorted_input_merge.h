#pragma once
/// The sorters of a keyed head's inputs, one per input, read back as one stream in key order (Flink's
/// MultiInputSortingDataInput: the heads of the sorted inputs in a priority queue by key, then timestamp).
/// With one input it is that input's sorter. Used by SortingBacklogDataInput. Threading: the task thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "runtime/stream_element.h"

namespace sluice::runtime {

class SortedInputMerge {
 public:
  /// `sorters`: one per input of the head (1 or 2), none null. Equal keys must have equal key bytes in
  /// every sorter (the HASH exchanges' key groups, the same key encoding).
  explicit SortedInputMerge(std::vector<std::unique_ptr<KeyedInputSorter>> sorters);

  int numInputs() const { return static_cast<int>(sorters_.size()); }
  /// Adds a batch of input `input` (0-based).
  void addRows(const types::RowBatch& batch, int input) { sorters_[static_cast<size_t>(input)]->addRows(batch); }
  void addObjects(const ObjectBatch& batch, int input) { sorters_[static_cast<size_t>(input)]->addObjects(batch); }
  /// No more records in this phase, on any input.
  void finish();
  /// The next batch in merged order into `out`, of input `input`: up to `max_records` records of one input
  /// whose (key, timestamp) come before the other input's next record (ties: the first input's records
  /// first). So a key's records of both inputs are adjacent, and each input's records keep their order.
  /// False when every sorter is empty.
  bool next(size_t max_records, StreamElement& out, int& input);
  /// Drops what is left and the spill files of every sorter.
  void reset();
  /// Over every sorter: bytes spilled since construction.
  int64_t bytesSpilled() const;

 private:
  std::vector<std::unique_ptr<KeyedInputSorter>> sorters_;
};

}  // namespace sluice::runtime

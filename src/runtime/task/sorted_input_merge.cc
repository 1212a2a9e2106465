#include "runtime/task/sorted_input_merge.h"

#include <string_view>

#include "common/error.h"
#include "runtime/sort/external_sorter.h"

namespace sluice::runtime {

SortedInputMerge::SortedInputMerge(std::vector<std::unique_ptr<KeyedInputSorter>> sorters)
    : sorters_(std::move(sorters)) {
  SLUICE_CHECK(sorters_.size() == 1 || sorters_.size() == 2, "a sorted input over {} inputs", sorters_.size());
  for (const auto& s : sorters_) SLUICE_CHECK(s != nullptr, "a sorted input without its sorter");
}

void SortedInputMerge::finish() {
  for (auto& s : sorters_) s->finish();
}

bool SortedInputMerge::next(size_t max_records, StreamElement& out, int& input) {
  if (sorters_.size() == 1) {
    input = 0;
    return sorters_[0]->next(max_records, out);
  }
  std::string_view key[2];
  int64_t timestamp[2] = {0, 0};
  const bool has0 = sorters_[0]->peek(key[0], timestamp[0]);
  const bool has1 = sorters_[1]->peek(key[1], timestamp[1]);
  if (!has0 && !has1) return false;
  if (!has1 || !has0) {
    input = has0 ? 0 : 1;
    return sorters_[static_cast<size_t>(input)]->next(max_records, out);
  }
  // The input whose head comes first reads up to the other's head: the first input up to and including
  // an equal (key, timestamp), the second only before it.
  const sort::SortBound before_second{key[1], timestamp[1], /*inclusive=*/true};
  if (before_second.admits(key[0], timestamp[0])) {
    input = 0;
    return sorters_[0]->next(max_records, out, &before_second);
  }
  const sort::SortBound before_first{key[0], timestamp[0], /*inclusive=*/false};
  input = 1;
  return sorters_[1]->next(max_records, out, &before_first);
}

void SortedInputMerge::reset() {
  for (auto& s : sorters_) s->reset();
}

int64_t SortedInputMerge::bytesSpilled() const {
  int64_t n = 0;
  for (const auto& s : sorters_) n += s->sorter().bytesSpilled();
  return n;
}

}  // namespace sluice::runtime

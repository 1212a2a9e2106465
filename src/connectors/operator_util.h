#pragma once
/// Small helpers shared by the connector sources and operators.

#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "common/config.h"
#include "runtime/operators/source_sink_operators.h"
#include "runtime/operators/stream_operator.h"

namespace sluice::connectors {

/// Rows per emitted RowBatch: `sluice.batch.size` of the job configuration, 1024 when the context
/// carries none; at least 1.
inline size_t batchSizeOf(const runtime::OperatorContext& ctx) {
  int n = ctx.config != nullptr ? ctx.config->get(options::kBatchSize) : 1024;
  return n > 0 ? static_cast<size_t>(n) : 1;
}

}  // namespace sluice::connectors

namespace sluice::connectors {

/// Hands each subtask the splits listed for it, in order (a static assignment: the same subtask reads
/// the same data in every run). Not thread-safe (the EnumeratorCoordinator locks it).
template <typename SplitT>
class SubtaskSplitEnumerator final : public runtime::SplitEnumerator<SplitT> {
 public:
  /// `by_subtask[j]` are the splits of list j. `readers`: the number of subtasks asking; reader s gets
  /// the lists j with j % readers == s, in j order (0: one reader per list, the plain static assignment;
  /// fewer or more readers happen when a checkpoint taken at another parallelism is restored).
  explicit SubtaskSplitEnumerator(std::vector<std::vector<SplitT>> by_subtask, int readers = 0) {
    for (auto& splits : by_subtask) queues_.emplace_back(splits.begin(), splits.end());
    readers_ = readers > 0 ? static_cast<size_t>(readers) : std::max<size_t>(1, queues_.size());
  }
  std::optional<SplitT> handleSplitRequest(int subtask) override {
    if (subtask < 0) return std::nullopt;
    for (size_t j = static_cast<size_t>(subtask); j < queues_.size(); j += readers_) {
      if (queues_[j].empty()) continue;
      SplitT s = std::move(queues_[j].front());
      queues_[j].pop_front();
      return s;
    }
    return std::nullopt;
  }

 private:
  std::vector<std::deque<SplitT>> queues_;
  size_t readers_ = 1;
};

}  // namespace sluice::connectors

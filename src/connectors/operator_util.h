#pragma once
/// Small helpers shared by the connector sources and operators.

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
  /// `by_subtask[i]` are the splits of subtask i.
  explicit SubtaskSplitEnumerator(std::vector<std::vector<SplitT>> by_subtask) {
    for (auto& splits : by_subtask) queues_.emplace_back(splits.begin(), splits.end());
  }
  std::optional<SplitT> handleSplitRequest(int subtask) override {
    if (subtask < 0 || static_cast<size_t>(subtask) >= queues_.size() || queues_[subtask].empty()) return std::nullopt;
    SplitT s = std::move(queues_[subtask].front());
    queues_[subtask].pop_front();
    return s;
  }

 private:
  std::vector<std::deque<SplitT>> queues_;
};

}  // namespace sluice::connectors

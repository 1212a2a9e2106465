#pragma once
/// Helpers for the snapshot / restore tests of the SQL operators: state contexts for a subtask's key
/// groups, a checkpoint as a StreamTask takes it, and the state of a subtask after rescaling.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operator_test_util.h"
#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/state/key_group.h"
#include "runtime/state/state_redistribution.h"
#include "runtime/state/stream_operator_state_context.h"

namespace sluice::table::testing {

inline constexpr int32_t kMaxParallelism = 128;

/// The key groups of subtask `index` of `parallelism` (KeyGroupRangeAssignment).
inline runtime::state::KeyGroupRange subtaskRange(int32_t parallelism, int32_t index) {
  return runtime::state::KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(kMaxParallelism, parallelism,
                                                                                       index);
}

/// A state context for subtask `index` of `parallelism`, restored from `restored` (nullptr: fresh).
inline std::unique_ptr<runtime::state::StreamOperatorStateContext> makeStateContext(
    const runtime::checkpoint::OperatorSubtaskState* restored, int32_t parallelism = 1, int32_t index = 0) {
  return std::make_unique<runtime::state::StreamOperatorStateContext>("op", subtaskRange(parallelism, index),
                                                                      kMaxParallelism, restored);
}

/// A state context for subtask 0 of 1 on the backend `type` (RocksDB under the test's temporary
/// directory, in a folder named after `instance`), restored from `restored` (nullptr: fresh).
inline std::unique_ptr<runtime::state::StreamOperatorStateContext> makeStateContext(
    const runtime::checkpoint::OperatorSubtaskState* restored, runtime::state::StateBackendType type,
    const std::string& instance) {
  runtime::state::StateBackendOptions o;
  o.type = type;
  o.local_directory = ::testing::TempDir();
  o.instance_name = instance;
  return std::make_unique<runtime::state::StreamOperatorStateContext>("op", subtaskRange(1, 0), kMaxParallelism,
                                                                      restored, o);
}

/// Opens `op` as subtask `index` of `parallelism` on `state`, writing to `out`.
inline void openWithState(runtime::StreamOperator& op, runtime::Output& out, runtime::OperatorMetrics& metrics,
                          runtime::state::StreamOperatorStateContext& state, int parallelism = 1, int index = 0) {
  runtime::OperatorContext ctx;
  ctx.task_name = "test";
  ctx.operator_name = "test";
  ctx.uid = "op";
  ctx.subtask_index = index;
  ctx.parallelism = parallelism;
  ctx.max_parallelism = kMaxParallelism;
  ctx.metrics = &metrics;
  ctx.state = &state;
  op.open(ctx, &out);
}

/// A checkpoint of `op` as a StreamTask takes it: prepareSnapshotPreBarrier, snapshotState, then the
/// synchronous snapshot of its state context.
inline runtime::checkpoint::OperatorSubtaskState takeSnapshot(runtime::StreamOperator& op,
                                                              runtime::state::StreamOperatorStateContext& state,
                                                              int64_t checkpoint_id = 1) {
  op.prepareSnapshotPreBarrier(checkpoint_id);
  op.snapshotState(checkpoint_id);
  return state.snapshot();
}

/// The state subtask `index` of `new_parallelism` restores from the old subtasks' snapshots: the key
/// groups of its range and its share of the operator state.
inline runtime::checkpoint::OperatorSubtaskState rescaled(
    const std::vector<const runtime::checkpoint::OperatorSubtaskState*>& old, int32_t new_parallelism, int32_t index) {
  runtime::checkpoint::OperatorSubtaskState s;
  s.keyed = runtime::state::selectKeyGroups(old, subtaskRange(new_parallelism, index));
  s.operator_state = runtime::state::redistributeOperatorState(old, new_parallelism)[static_cast<size_t>(index)];
  return s;
}

/// Concatenation of two event lists.
inline std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace sluice::table::testing

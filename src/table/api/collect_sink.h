#pragma once
/// The sink of a bare SELECT (Flink's CollectSinkOperator role, parallelism 1): hands every batch,
/// with the result schema, to a callback. The callback runs on the sink's task thread.

#include <functional>
#include <memory>

#include "runtime/operators/stream_operator.h"

namespace sluice::table {

using CollectCallback = std::function<void(const types::RowType&, const types::RowBatch&)>;

/// A factory of collect sink operators calling `callback` (which must be thread-safe if the sink
/// could run with more than one subtask; the planner gives it parallelism 1).
std::shared_ptr<const runtime::StreamOperatorFactory> makeCollectSinkFactory(types::RowType type,
                                                                             CollectCallback callback);

}  // namespace sluice::table

#pragma once
/// Small helpers shared by the connector operators.

#include <cstddef>

#include "common/config.h"
#include "runtime/operators/stream_operator.h"

namespace sluice::connectors {

/// Rows per emitted RowBatch: `sluice.batch.size` of the job configuration, 1024 when the context
/// carries none; at least 1.
inline size_t batchSizeOf(const runtime::OperatorContext& ctx) {
  int n = ctx.config != nullptr ? ctx.config->get(options::kBatchSize) : 1024;
  return n > 0 ? static_cast<size_t>(n) : 1;
}

}  // namespace sluice::connectors

#pragma once
/// The source of a VALUES clause and of SELECT without FROM (Flink's StreamExecValues): emits rows fixed
/// at planning time, once, then ends. One split ("values") holding the number of rows already emitted,
/// so a restored job emits only the rest; any reader may take it (the planner runs it at parallelism 1,
/// as Flink does). Threading: the factory and the rows are shared read-only by the subtasks.

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/serialization/type_traits.h"
#include "types/row_batch.h"

namespace sluice::runtime {
class StreamOperatorFactory;
}

namespace sluice::table {

/// The one split of a Values source: rows of the batch already emitted.
struct ValuesSplit {
  int64_t emitted = 0;
  std::string splitId() const { return "values"; }
};
SLUICE_TYPE(ValuesSplit, emitted)

/// A source operator factory emitting `rows` (all +I) in batches of at most `sluice.batch.size` rows.
std::shared_ptr<const runtime::StreamOperatorFactory> makeValuesSourceFactory(
    std::shared_ptr<const types::RowBatch> rows);

}  // namespace sluice::table

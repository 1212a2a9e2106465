#pragma once
/// Helpers to drive SQL operators directly: build input batches cell by cell and record everything an
/// operator emits (rows as "+I[a, 1]", watermarks as "WM(5)", watermark statuses as "IDLE" / "ACTIVE") in
/// order.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace sluice::table::testing {

/// One input cell: NULL (std::monostate), an int64-backed value (INT, BIGINT, TIMESTAMP in ms, DECIMAL
/// unscaled), a DOUBLE or a string.
using Cell = std::variant<std::monostate, int64_t, double, std::string>;
inline const Cell kNull = std::monostate{};

struct InputRow {
  types::RowKind kind;
  std::vector<Cell> cells;
};

inline InputRow ins(std::vector<Cell> cells) { return {types::RowKind::kInsert, std::move(cells)}; }
inline InputRow del(std::vector<Cell> cells) { return {types::RowKind::kDelete, std::move(cells)}; }
inline InputRow ub(std::vector<Cell> cells) { return {types::RowKind::kUpdateBefore, std::move(cells)}; }
inline InputRow ua(std::vector<Cell> cells) { return {types::RowKind::kUpdateAfter, std::move(cells)}; }

/// A batch of `type` holding `rows`.
inline types::RowBatch makeBatch(const types::RowType& type, const std::vector<InputRow>& rows) {
  types::RowBatch b(type);
  for (const InputRow& r : rows) {
    for (size_t c = 0; c < type.size(); ++c) {
      types::Column& col = b.column(c);
      const Cell& cell = r.cells.at(c);
      if (std::holds_alternative<std::monostate>(cell)) col.appendNull();
      else if (const auto* l = std::get_if<int64_t>(&cell)) col.appendLong(*l);
      else if (const auto* d = std::get_if<double>(&cell)) col.appendDouble(*d);
      else col.appendString(std::get<std::string>(cell));
    }
    b.kinds().push_back(r.kind);
  }
  return b;
}

/// "+I[a, 1, null]": integers and timestamps as plain numbers (ms), DECIMAL with its scale, DOUBLE as
/// Java prints it.
inline std::string formatTestRow(const types::RowBatch& b, size_t row) {
  std::string s(types::shortString(b.kind(row)));
  s += '[';
  for (size_t c = 0; c < b.numColumns(); ++c) {
    if (c) s += ", ";
    const types::Column& col = b.column(c);
    if (col.isNull(row)) {
      s += "null";
      continue;
    }
    switch (col.type().id) {
      case types::TypeId::kDouble: types::formatDouble(col.getDouble(row), s); break;
      case types::TypeId::kDecimal: types::formatDecimal(col.getLong(row), col.type().scale, s); break;
      case types::TypeId::kVarchar:
      case types::TypeId::kChar: s += col.getString(row); break;
      default: s += std::to_string(col.getLong(row)); break;
    }
  }
  s += ']';
  return s;
}

/// Records rows and watermarks in the order they are emitted, and the batches themselves.
class CollectingOutput : public runtime::Output {
 public:
  void collect(types::RowBatch&& batch) override {
    for (size_t r = 0; r < batch.numRows(); ++r) events.push_back(formatTestRow(batch, r));
    batches.push_back(std::move(batch));
  }
  void emitWatermark(runtime::Watermark mark) override {
    events.push_back("WM(" + std::to_string(mark.timestamp) + ")");
  }
  void emitWatermarkStatus(runtime::WatermarkStatus status) override {
    events.push_back(runtime::watermarkStatusName(status));
  }
  /// Returns the events recorded so far and forgets them.
  std::vector<std::string> take() {
    std::vector<std::string> e = std::move(events);
    events.clear();
    return e;
  }

  std::vector<std::string> events;
  std::vector<types::RowBatch> batches;
};

/// Opens `op` on a one-subtask context writing to `out`, with an optional job configuration and
/// processing-time service.
inline void openOperator(runtime::StreamOperator& op, runtime::Output& out, runtime::OperatorMetrics& metrics,
                         const Configuration* config = nullptr, runtime::ProcessingTimeService* timers = nullptr) {
  runtime::OperatorContext ctx;
  ctx.task_name = "test";
  ctx.operator_name = "test";
  ctx.metrics = &metrics;
  ctx.config = config;
  ctx.processing_time_service = timers;
  op.open(ctx, &out);
}

}  // namespace sluice::table::testing

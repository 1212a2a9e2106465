#include "table/runtime/window_table_function.h"

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/task/task_cancellation.h"
#include "table/runtime/window_assign_internal.h"

namespace sluice::table {

types::RowType WindowTableFunctionOperator::outputType(const types::RowType& input_type, const WindowSpec& window) {
  types::RowType out = input_type;
  for (const char* name : {"window_start", "window_end"}) {
    out.names.emplace_back(name);
    out.types.push_back(types::LogicalType::timestamp(3, false));
  }
  out.names.emplace_back("window_time");
  out.types.push_back(window.time_zone.empty() ? types::LogicalType::timestamp(3, false)
                                               : types::LogicalType::timestampLtz(3, false));
  return out;
}

WindowTableFunctionOperator::WindowTableFunctionOperator(types::RowType input_type, WindowSpec window)
    : output_type_(outputType(input_type, window)), window_(window), shift_(window.time_zone) {
  SLUICE_USER_CHECK(window_.kind != WindowSpec::Kind::kSession,
                    "A SESSION window table function is only supported with a window aggregation");
  window_internal::validateWindow(input_type, window_);
  if (window_.kind == WindowSpec::Kind::kTumble) window_.slide_ms = window_.size_ms;
}

void WindowTableFunctionOperator::processBatch(types::RowBatch&& batch) {
  if (batch.empty()) return;
  types::RowBatch out(output_type_);
  const size_t width = batch.numColumns();
  const types::Column& time_col = batch.column(static_cast<size_t>(window_.time_index));
  // A HOP window with a small slide gives one row thousands of windows: a cancel must not wait for them.
  runtime::CancellationCheck<> cancellation;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != types::RowKind::kInsert)
      throw UserError(fmt::format("A window table function does not support update/delete input (got a {} row)",
                                  types::shortString(batch.kind(row))));
    if (time_col.isNull(row)) {
      ++num_null_rowtime_dropped_;
      continue;
    }
    window_internal::forEachWindowEnd(window_, shift_.toUtcTimestampMills(time_col.getLong(row)), [&](int64_t end) {
      cancellation.tick();
      for (size_t c = 0; c < width; ++c) out.column(c).appendFrom(batch.column(c), row);
      out.column(width).appendLong(window_internal::windowStartOf(window_, end));
      out.column(width + 1).appendLong(end);
      out.column(width + 2).appendLong(shift_.toEpochMills(end - 1));
      out.kinds().push_back(types::RowKind::kInsert);
    });
  }
  if (!out.empty()) output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowTableFunctionFactory(types::RowType input_type,
                                                                                      WindowSpec window) {
  WindowTableFunctionOperator probe(input_type, window);
  return runtime::makeOperatorFactory(
      [input_type = std::move(input_type), window]() -> std::unique_ptr<runtime::StreamOperator> {
        return std::make_unique<WindowTableFunctionOperator>(input_type, window);
      });
}

}  // namespace sluice::table

#pragma once
/// Window assignment of the window table functions TUMBLE / HOP / CUMULATE on a row time (ms), shared by
/// WindowAggregateOperator and WindowTableFunctionOperator (Flink's SliceAssigners and
/// WindowAssigner.assignWindows). Internal to table/runtime.

#include <cstdint>

#include "table/runtime/aggregate_call.h"
#include "table/runtime/time_window_util.h"
#include "types/row_batch.h"

namespace sluice::table::window_internal {

/// TimeWindow.getWindowStartWithOffset: the remainder is taken into [0, size) so negative times
/// (before 1970) fall into the window that contains them.
inline int64_t windowStart(int64_t t, int64_t offset, int64_t size) {
  int64_t rem = (t - offset) % size;
  if (rem < 0) rem += size;
  return t - rem;
}

/// The start of the window ending at `end` (SliceAssigner.getWindowStart): a CUMULATE window starts where
/// its max-size window does.
inline int64_t windowStartOf(const WindowSpec& w, int64_t end) {
  if (w.kind == WindowSpec::Kind::kCumulate) return windowStart(end - 1, w.offset_ms, w.size_ms);
  return end - w.size_ms;
}

/// Calls fn(end) for the end of every window containing t: TUMBLE one, HOP size / slide (latest start first),
/// CUMULATE the windows [start, start + k * step) of t's max-size window that reach past t (earliest first).
/// `w.slide_ms` must equal `w.size_ms` for TUMBLE.
template <typename Fn>
void forEachWindowEnd(const WindowSpec& w, int64_t t, Fn&& fn) {
  if (w.kind == WindowSpec::Kind::kCumulate) {
    const int64_t max_end = windowStart(t, w.offset_ms, w.size_ms) + w.size_ms;
    for (int64_t end = windowStart(t, w.offset_ms, w.slide_ms) + w.slide_ms; end <= max_end; end += w.slide_ms)
      fn(end);
    return;
  }
  // The last window containing t starts at windowStart(t, offset, slide); earlier ones every slide.
  for (int64_t start = windowStart(t, w.offset_ms, w.slide_ms); start > t - w.size_ms; start -= w.slide_ms)
    fn(start + w.size_ms);
}

/// The slice assigners' parameter checks (TUMBLE / HOP / CUMULATE) and the time column's type.
/// Throws UserError.
void validateWindow(const types::RowType& input, const WindowSpec& w);

}  // namespace sluice::table::window_internal

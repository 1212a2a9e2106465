#include "table/runtime/window_aggregate.h"

#include <map>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "table/runtime/accumulators_internal.h"

namespace sluice::table {

using types::LogicalType;
using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

// TimeWindow.getWindowStartWithOffset: the remainder is taken into [0, size) so negative times
// (before 1970) fall into the window that contains them.
int64_t windowStart(int64_t t, int64_t offset, int64_t size) {
  int64_t rem = (t - offset) % size;
  if (rem < 0) rem += size;
  return t - rem;
}

void validate(const RowType& input, const WindowSpec& w) {
  SLUICE_USER_CHECK(w.time_index >= 0 && static_cast<size_t>(w.time_index) < input.size(),
                    "window time column {} out of range (input has {} columns)", w.time_index, input.size());
  const LogicalType& time_type = input.types[static_cast<size_t>(w.time_index)];
  SLUICE_USER_CHECK(time_type.id == types::TypeId::kTimestamp || time_type.id == types::TypeId::kBigInt,
                    "window time column {} must be TIMESTAMP(3), but is {}", w.time_index, time_type.toString());
  if (w.kind == WindowSpec::Kind::kTumble) {
    // TumblingSliceAssigner's checks.
    SLUICE_USER_CHECK(w.size_ms > 0, "TUMBLE window parameters must satisfy size > 0, but got size {}ms",
                      w.size_ms);
    SLUICE_USER_CHECK(w.offset_ms > -w.size_ms && w.offset_ms < w.size_ms,
                      "TUMBLE window parameters must satisfy abs(offset) < size, but got size {}ms and offset {}ms",
                      w.size_ms, w.offset_ms);
  } else {
    // HoppingSliceAssigner's checks.
    SLUICE_USER_CHECK(w.size_ms > 0 && w.slide_ms > 0,
                      "HOP window must satisfy slide > 0 and size > 0, but got slide {}ms and size {}ms",
                      w.slide_ms, w.size_ms);
    SLUICE_USER_CHECK(w.size_ms % w.slide_ms == 0,
                      "HOP window requires size must be an integral multiple of slide, but got size {}ms and "
                      "slide {}ms",
                      w.size_ms, w.slide_ms);
  }
}

}  // namespace

struct WindowAggregateOperator::Impl {
  Impl(const RowType& input_type, std::vector<int> group_keys, const std::vector<AggregateCall>& calls)
      : keys(input_type, std::move(group_keys)), handler(input_type, calls, /*with_retraction=*/false) {}

  /// The groups of one window, in order of their first row.
  struct WindowGroups {
    std::unordered_map<std::string, uint32_t> index;
    std::vector<std::string> keys;
    std::vector<agg::Accumulators> accs;
  };

  agg::KeyCodec keys;
  agg::AggsHandler handler;
  std::map<int64_t, WindowGroups> windows;  ///< by window_end, ascending = firing order
  std::string key_buf;
  std::vector<agg::AggValue> values;
};

RowType WindowAggregateOperator::outputType(const RowType& input_type, const std::vector<int>& group_keys,
                                            const std::vector<AggregateCall>& calls) {
  RowType out = agg::keysAndAggregatesType(input_type, group_keys, calls, false);
  out.names.push_back("window_start");
  out.types.push_back(LogicalType::timestamp(3, false));
  out.names.push_back("window_end");
  out.types.push_back(LogicalType::timestamp(3, false));
  return out;
}

WindowAggregateOperator::WindowAggregateOperator(RowType input_type, WindowSpec window, std::vector<int> group_keys,
                                                 std::vector<AggregateCall> calls)
    : output_type_(outputType(input_type, group_keys, calls)), window_(window) {
  validate(input_type, window_);
  if (window_.kind == WindowSpec::Kind::kTumble) window_.slide_ms = window_.size_ms;
  impl_ = std::make_unique<Impl>(input_type, std::move(group_keys), calls);
}

WindowAggregateOperator::~WindowAggregateOperator() = default;

size_t WindowAggregateOperator::numPendingWindows() const { return impl_->windows.size(); }

void WindowAggregateOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  const types::Column& time_col = batch.column(static_cast<size_t>(window_.time_index));
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != RowKind::kInsert) {
      throw UserError(fmt::format("window aggregate does not support update/delete input (got a {} row)",
                                  types::shortString(batch.kind(row))));
    }
    if (time_col.isNull(row)) {
      // AbstractSliceAssigner.assignSliceEnd fails the job on a NULL row time.
      throw UserError("RowTime field should not be null, please convert it to a non-null long value.");
    }
    const int64_t t = time_col.getLong(row);
    bool assigned = false;
    // The last window containing t starts at windowStart(t, offset, slide); earlier ones every slide.
    const int64_t last_start = windowStart(t, window_.offset_ms, window_.slide_ms);
    for (int64_t start = last_start; start > t - window_.size_ms; start -= window_.slide_ms) {
      const int64_t end = start + window_.size_ms;
      if (end - 1 <= current_watermark_) continue;  // TimeWindowUtil.isWindowFired
      if (!assigned) s.keys.encode(batch, row, s.key_buf);
      assigned = true;
      Impl::WindowGroups& w = s.windows[end];
      auto [it, inserted] = w.index.try_emplace(s.key_buf, static_cast<uint32_t>(w.keys.size()));
      if (inserted) {
        w.keys.push_back(s.key_buf);
        w.accs.emplace_back();
        s.handler.init(w.accs.back());
      }
      s.handler.accumulate(w.accs[it->second], batch, row);
    }
    if (!assigned) ++num_late_records_dropped_;
  }
}

void WindowAggregateOperator::processWatermark(runtime::Watermark mark) {
  Impl& s = *impl_;
  if (mark.timestamp > current_watermark_) {
    current_watermark_ = mark.timestamp;
    RowBatch out(output_type_);
    const size_t num_keys = s.keys.keyColumns().size();
    const size_t agg_first = num_keys;
    const size_t start_col = num_keys + s.handler.numAggs();
    while (!s.windows.empty() && s.windows.begin()->first - 1 <= current_watermark_) {
      auto node = s.windows.extract(s.windows.begin());
      const int64_t end = node.key();
      Impl::WindowGroups& w = node.mapped();
      for (size_t g = 0; g < w.keys.size(); ++g) {
        s.keys.decodeAppend(w.keys[g], out, 0);
        s.handler.getValue(w.accs[g], s.values);
        s.handler.appendValues(s.values, out, agg_first);
        out.column(start_col).appendLong(end - window_.size_ms);
        out.column(start_col + 1).appendLong(end);
        out.kinds().push_back(RowKind::kInsert);
      }
    }
    if (!out.empty()) output_->collect(std::move(out));
  }
  output_->emitWatermark(mark);
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowAggregateFactory(RowType input_type,
                                                                                  WindowSpec window,
                                                                                  std::vector<int> group_keys,
                                                                                  std::vector<AggregateCall> calls) {
  // Constructing one instance validates the arguments (UserError) before the job starts.
  WindowAggregateOperator probe(input_type, window, group_keys, calls);
  return runtime::makeOperatorFactory([input_type = std::move(input_type), window, group_keys = std::move(group_keys),
                                       calls = std::move(calls)] {
    return std::make_unique<WindowAggregateOperator>(input_type, window, group_keys, calls);
  });
}

}  // namespace sluice::table

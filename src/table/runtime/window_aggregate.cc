#include "table/runtime/window_aggregate.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
#include <string>

#include <fmt/format.h>

#include "runtime/operators/keyed_input_sorter.h"
#include "common/error.h"
#include "runtime/network/record_writer.h"
#include "runtime/task/task_cancellation.h"
#include "runtime/time/processing_time_service.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/session_window_aggregate.h"
#include "table/runtime/window_assign_internal.h"

namespace sluice::table {

using types::LogicalType;
using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

// WindowAggOperator's state names (SlicingWindowAggOperatorBuilder, WindowAggOperator.open).
constexpr const char* kWindowStateName = "window-aggs";
constexpr const char* kTimerServiceName = "window-timers";
constexpr const char* kWatermarkStateName = "watermark";

/// The value of "window-aggs": the accumulators of one (key, window) and the arrival number of the key
/// in that window (firing emits a window's keys in that order).
struct WindowAcc {
  uint64_t seq = 0;
  agg::Accumulators acc;
};

/// varint seq, then AccumulatorsSerializer.
struct WindowAccSerializer {
  static void serialize(const WindowAcc& v, runtime::DataOutputView& out) {
    out.writeVarUint(v.seq);
    agg::AccumulatorsSerializer::serialize(v.acc, out);
  }
  static WindowAcc deserialize(runtime::DataInputView& in) {
    WindowAcc v;
    v.seq = in.readVarUint();
    v.acc = agg::AccumulatorsSerializer::deserialize(in);
    return v;
  }
  static WindowAcc copy(const WindowAcc& v) { return WindowAcc{v.seq, agg::AccumulatorsSerializer::copy(v.acc)}; }
};

using WindowState = runtime::state::ValueState<WindowAcc, WindowAccSerializer>;

// A window end as a namespace: big-endian, as Flink's LongSerializer writes it.
void encodeWindowEnd(int64_t end, std::string& out) {
  out.resize(8);
  const auto u = static_cast<uint64_t>(end);
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(u >> (56 - 8 * i));
}

bool decodeWindowEnd(std::string_view ns, int64_t& end) {
  if (ns.size() != 8) return false;
  uint64_t u = 0;
  for (char c : ns) u = (u << 8) | static_cast<uint8_t>(c);
  end = static_cast<int64_t>(u);
  return true;
}

}  // namespace

namespace window_internal {

void validateWindow(const RowType& input, const WindowSpec& w) {
  // Processing time reads no column.
  if (!w.proctime) {
    SLUICE_USER_CHECK(w.time_index >= 0 && static_cast<size_t>(w.time_index) < input.size(),
                      "window time column {} out of range (input has {} columns)", w.time_index, input.size());
    const LogicalType& time_type = input.types[static_cast<size_t>(w.time_index)];
    SLUICE_USER_CHECK(time_type.id == types::TypeId::kTimestamp || time_type.id == types::TypeId::kTimestampLtz ||
                          time_type.id == types::TypeId::kBigInt,
                      "window time column {} must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), but is {}", w.time_index,
                      time_type.toString());
  }
  SLUICE_CHECK(w.kind != WindowSpec::Kind::kSession, "SESSION windows run in SessionWindowAggregateOperator");
  if (w.kind == WindowSpec::Kind::kTumble) {
    // TumblingSliceAssigner's checks.
    SLUICE_USER_CHECK(w.size_ms > 0, "TUMBLE window parameters must satisfy size > 0, but got size {}ms",
                      w.size_ms);
    SLUICE_USER_CHECK(w.offset_ms > -w.size_ms && w.offset_ms < w.size_ms,
                      "TUMBLE window parameters must satisfy abs(offset) < size, but got size {}ms and offset {}ms",
                      w.size_ms, w.offset_ms);
  } else if (w.kind == WindowSpec::Kind::kCumulate) {
    // CumulativeSliceAssigner's checks.
    SLUICE_USER_CHECK(w.size_ms > 0 && w.slide_ms > 0,
                      "CUMULATE window parameters must satisfy maxSize > 0 and step > 0, but got maxSize {}ms and "
                      "step {}ms",
                      w.size_ms, w.slide_ms);
    SLUICE_USER_CHECK(w.size_ms % w.slide_ms == 0,
                      "CUMULATE window requires maxSize must be an integral multiple of step, but got maxSize {}ms "
                      "and step {}ms",
                      w.size_ms, w.slide_ms);
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

}  // namespace window_internal

using window_internal::forEachWindowEnd;
using window_internal::validateWindow;
using window_internal::windowStart;
using window_internal::windowStartOf;

struct WindowAggregateOperator::Impl {
  Impl(const RowType& input_type, std::vector<int> group_keys, const std::vector<AggregateCall>& calls,
       const std::string& time_zone)
      : keys(input_type, std::move(group_keys)), handler(input_type, calls, /*with_retraction=*/false),
        shift(time_zone) {}

  /// A fired (key, window), held until every key of its window has fired so they leave in arrival order.
  struct Fired {
    int64_t end;
    uint64_t seq;
    std::string key;
    agg::Accumulators acc;
  };

  agg::KeyCodec keys;
  agg::AggsHandler handler;
  ShiftTimeZone shift;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;  ///< when ctx.state is null
  runtime::state::KeyedStateBackend* backend = nullptr;
  WindowState* aggs = nullptr;
  runtime::state::InternalTimerService* timers = nullptr;
  runtime::state::PartitionableListState<int64_t>* watermark_state = nullptr;
  /// Processing-time timers handed to the ProcessingTimeService (not state: re-armed from the timer
  /// service after a restore).
  std::set<int64_t> scheduled;
  /// Arrival number of the next (key, window) entry: above every stored one, restored ones included.
  uint64_t next_seq = 0;
  std::vector<Fired> fired;
  std::vector<uint64_t> hashes;
  std::string key_buf;
  std::string ns_buf;
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
  validateWindow(input_type, window_);
  if (window_.kind == WindowSpec::Kind::kTumble) window_.slide_ms = window_.size_ms;
  impl_ = std::make_unique<Impl>(input_type, std::move(group_keys), calls, window_.time_zone);
}

WindowAggregateOperator::~WindowAggregateOperator() = default;

size_t WindowAggregateOperator::numPendingWindows() const {
  if (impl_->aggs == nullptr) return 0;
  std::set<std::string> windows;
  impl_->aggs->forEachKey(
      [&](std::string_view, int32_t, std::string_view ns, WindowAcc&) { windows.emplace(ns); });
  return windows.size();
}

void WindowAggregateOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  s.aggs = &s.backend->getValueState(runtime::state::ValueStateDescriptor<WindowAcc, WindowAccSerializer>{kWindowStateName});
  s.timers = &s.backend->getInternalTimerService(kTimerServiceName);
  s.watermark_state =
      &sc.operatorStateBackend().getUnionListState(runtime::state::ListStateDescriptor<int64_t>{kWatermarkStateName});
  if (!sc.isRestored()) return;
  // WindowAggOperator.initializeState: the smallest watermark of the old subtasks.
  const std::vector<int64_t>& marks = s.watermark_state->get();
  if (!marks.empty()) current_watermark_ = *std::min_element(marks.begin(), marks.end());
  s.aggs->forEachKey([&](std::string_view key, int32_t key_group, std::string_view ns, WindowAcc& w) {
    try {
      int64_t end;
      if (!s.keys.isValid(key)) throw InputError("a key does not decode");
      if (!decodeWindowEnd(ns, end)) throw InputError(fmt::format("a window namespace of {} bytes", ns.size()));
      s.handler.checkLayout(w.acc);
    } catch (const InputError& e) {
      internal::rethrowRestoreError(sc, kWindowStateName, key_group, e);
    }
    s.next_seq = std::max(s.next_seq, w.seq + 1);
  });
  if (auto next = s.timers->nextProcessingTime()) scheduleProcessingTimer(*next);
}

int64_t WindowAggregateOperator::processingTime() const {
  if (ctx_.processing_time_service != nullptr) return ctx_.processing_time_service->currentProcessingTime();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void WindowAggregateOperator::scheduleProcessingTimer(int64_t time) {
  if (ctx_.processing_time_service == nullptr || !impl_->scheduled.insert(time).second) return;
  ctx_.processing_time_service->registerTimer(time, [this](int64_t t) {
    impl_->scheduled.erase(t);
    fireWindows(/*event_time=*/false, t);
    if (auto next = impl_->timers->nextProcessingTime()) scheduleProcessingTimer(*next);
  });
}

void WindowAggregateOperator::endInput() {
  if (window_.proctime) fireWindows(/*event_time=*/false, std::numeric_limits<int64_t>::max());
}

void WindowAggregateOperator::snapshotState(int64_t checkpoint_id) {
  (void)checkpoint_id;
  SLUICE_CHECK(impl_->watermark_state != nullptr, "WindowAggregate snapshot before open()");
  impl_->watermark_state->update({current_watermark_});
}

void WindowAggregateOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.aggs != nullptr, "WindowAggregate used before open()");
  // Processing time reads no column.
  const types::Column* time_col =
      window_.proctime ? nullptr : &batch.column(static_cast<size_t>(window_.time_index));
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  // A HOP window with a small slide gives one row thousands of windows: a cancel must not wait for them.
  runtime::CancellationCheck<> cancellation;
  // Processing time: the whole batch arrives now, and no window of now has fired yet.
  const int64_t now = window_.proctime ? processingTime() : 0;
  const int64_t fired_until = window_.proctime ? std::numeric_limits<int64_t>::min() : current_watermark_;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != RowKind::kInsert) {
      throw UserError(fmt::format("window aggregate does not support update/delete input (got a {} row)",
                                  types::shortString(batch.kind(row))));
    }
    if (!window_.proctime && time_col->isNull(row)) {
      // AbstractSliceAssigner.assignSliceEnd fails the job on a NULL row time.
      throw UserError("RowTime field should not be null, please convert it to a non-null long value.");
    }
    // SliceAssigner.assignSliceEnd: windows are assigned on the shift time zone's wall clock.
    const int64_t t = s.shift.toUtcTimestampMills(window_.proctime ? now : time_col->getLong(row));
    bool assigned = false;
    forEachWindowEnd(window_, t, [&](int64_t end) {
      cancellation.tick();
      if (s.shift.isWindowFired(end, fired_until)) return;
      if (!assigned) {
        s.keys.encode(batch, row, s.key_buf);
        s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
      }
      assigned = true;
      encodeWindowEnd(end, s.ns_buf);
      s.aggs->setCurrentNamespace(s.ns_buf);
      WindowAcc* w = s.aggs->value();
      if (w == nullptr) {
        w = &s.aggs->valueOrInsert();
        w->seq = s.next_seq++;
        s.handler.init(w->acc);
        // WindowAggOperator registers the window's timer at its end - 1 (TimeWindowUtil.toEpochMillsForTimer).
        const int64_t timer = s.shift.toEpochMillsForTimer(end - 1);
        if (window_.proctime) {
          s.timers->registerProcessingTimeTimer(s.ns_buf, timer);
        } else {
          s.timers->registerEventTimeTimer(s.ns_buf, timer);
        }
      }
      s.handler.accumulate(w->acc, batch, row);
    });
    if (!assigned) {
      ++num_late_records_dropped_;
      if (ctx_.metrics != nullptr) ctx_.metrics->num_late_records_dropped.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (window_.proctime)
    if (auto next = s.timers->nextProcessingTime()) scheduleProcessingTimer(*next);
}

void WindowAggregateOperator::processWatermark(runtime::Watermark mark) {
  SLUICE_CHECK(impl_->timers != nullptr, "WindowAggregate used before open()");
  if (mark.timestamp > current_watermark_) {
    current_watermark_ = mark.timestamp;
    if (!window_.proctime) fireWindows(/*event_time=*/true, current_watermark_);
  }
  output_->emitWatermark(mark);
}

void WindowAggregateOperator::fireWindows(bool event_time, int64_t time) {
  Impl& s = *impl_;
  {
    RowBatch out(output_type_);
    const size_t num_keys = s.keys.keyColumns().size();
    const size_t agg_first = num_keys;
    const size_t start_col = num_keys + s.handler.numAggs();
    // Timers fire in time order and, within a time, by key bytes (several windows share a time when a
    // daylight-saving gap maps their ends to one instant); the windows leave in end order and the keys of
    // one window in their arrival order instead, as they always have.
    auto flush = [&] {
      std::sort(s.fired.begin(), s.fired.end(), [](const Impl::Fired& a, const Impl::Fired& b) {
        return a.end != b.end ? a.end < b.end : a.seq < b.seq;
      });
      for (const Impl::Fired& f : s.fired) {
        s.keys.decodeAppend(f.key, out, 0);
        s.handler.getValue(f.acc, s.values);
        s.handler.appendValues(s.values, out, agg_first);
        out.column(start_col).appendLong(windowStartOf(window_, f.end));
        out.column(start_col + 1).appendLong(f.end);
        out.kinds().push_back(RowKind::kInsert);
      }
      s.fired.clear();
    };
    runtime::CancellationCheck<> cancellation;
    auto fire = [&](std::string_view key, int32_t, std::string_view ns, int64_t) {
      cancellation.tick();
      int64_t end;
      if (!decodeWindowEnd(ns, end)) {
        // Only restored timers can be malformed: every namespace registered here has 8 bytes.
        throw InputError(fmt::format("operator '{}': restored timer of '{}' with a {}-byte window namespace",
                                     ctx_.uid, kTimerServiceName, ns.size()));
      }
      s.aggs->setCurrentNamespace(ns);
      WindowAcc* w = s.aggs->value();
      if (w == nullptr) return;
      s.fired.push_back(Impl::Fired{end, w->seq, std::string(key), std::move(w->acc)});
      s.aggs->clear();
    };
    if (event_time) {
      s.timers->advanceWatermark(time, fire);
    } else {
      s.timers->advanceProcessingTime(time, fire);
    }
    flush();
    if (!out.empty()) output_->collect(std::move(out));
  }
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowAggregateFactory(RowType input_type,
                                                                                  WindowSpec window,
                                                                                  std::vector<int> group_keys,
                                                                                  std::vector<AggregateCall> calls) {
  SLUICE_USER_CHECK(!(window.kind == WindowSpec::Kind::kSession && window.proctime),
                    "SESSION windows on a processing-time attribute are not supported yet");
  if (window.kind == WindowSpec::Kind::kSession)
    return makeSessionWindowAggregateFactory(std::move(input_type), std::move(window), std::move(group_keys),
                                             std::move(calls));
  // Constructing one instance validates the arguments (UserError) before the job starts.
  WindowAggregateOperator probe(input_type, window, group_keys, calls);
  // Sorted by the group keys in BATCH mode and during backlog (FLIP-327); the held watermark fires the
  // windows after the flush.
  return runtime::makeKeyedRowOperatorFactory(
      [input_type, window, group_keys, calls = std::move(calls)] {
        return std::make_unique<WindowAggregateOperator>(input_type, window, group_keys, calls);
      },
      input_type, group_keys);
}

}  // namespace sluice::table

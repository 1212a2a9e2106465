#include "table/runtime/over_aggregate.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/operators/keyed_input_sorter.h"
#include "common/error.h"
#include "runtime/network/record_writer.h"
#include "runtime/state/internal_timer_service.h"
#include "runtime/time/processing_time_service.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"

namespace sluice::table {

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

using AccState = runtime::state::ValueState<agg::Accumulators, agg::AccumulatorsSerializer>;
using Rows = std::vector<std::string>;  ///< KeyCodec bytes of whole input rows, in arrival order
/// Flink's MapState<Long, List<RowData>> "inputState" as one value per key, ordered by time: on RocksDB a
/// MapState leaves a tombstone per fired time under the key, which every later scan of the key wades through.
using Buffer = std::map<int64_t, Rows>;

/// varint number of times, then per time its int64 and the rows (TypeSerializer<std::vector<std::string>>).
struct BufferSerializer {
  static void serialize(const Buffer& b, runtime::DataOutputView& out) {
    out.writeVarUint(b.size());
    for (const auto& [t, rows] : b) {
      runtime::TypeSerializer<int64_t>::serialize(t, out);
      runtime::TypeSerializer<Rows>::serialize(rows, out);
    }
  }
  static Buffer deserialize(runtime::DataInputView& in) {
    Buffer b;
    const size_t n = in.readLength(9);
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = runtime::TypeSerializer<int64_t>::deserialize(in);
      b.emplace(t, runtime::TypeSerializer<Rows>::deserialize(in));
    }
    return b;
  }
};

using InputState = runtime::state::ValueState<Buffer, BufferSerializer>;
using LongState = runtime::state::ValueState<int64_t>;

// Flink's state names (the process functions of operators/over) and KeyedProcessOperator's timer service.
constexpr const char* kAccState = "accState";
constexpr const char* kInputState = "inputState";
constexpr const char* kLastTriggeringTsState = "lastTriggeringTsState";
constexpr const char* kCounterState = "processedCountState";
constexpr const char* kCleanupTsState = "cleanupTsState";
constexpr const char* kTimerService = "user-timers";

enum class Mode { kRowTimeUnbounded, kRowTimeRows, kRowTimeRange, kProcTimeUnbounded, kProcTimeRows, kProcTimeRange };

Mode modeOf(const OverSpec& s) {
  if (s.rowtime) return s.unbounded ? Mode::kRowTimeUnbounded : s.rows ? Mode::kRowTimeRows : Mode::kRowTimeRange;
  return s.unbounded ? Mode::kProcTimeUnbounded : s.rows ? Mode::kProcTimeRows : Mode::kProcTimeRange;
}

std::vector<int> allColumns(const RowType& t) {
  std::vector<int> all;
  for (size_t i = 0; i < t.size(); ++i) all.push_back(static_cast<int>(i));
  return all;
}

void validate(const RowType& input, const OverSpec& s) {
  SLUICE_USER_CHECK(s.time_column >= 0 && static_cast<size_t>(s.time_column) < input.size(),
                    "OVER time column {} out of range (input has {} columns)", s.time_column, input.size());
  const auto id = input.types[static_cast<size_t>(s.time_column)].id;
  SLUICE_USER_CHECK(id == types::TypeId::kTimestamp || id == types::TypeId::kTimestampLtz || id == types::TypeId::kBigInt,
                    "OVER time column {} must be a TIMESTAMP, but is {}", s.time_column,
                    input.types[static_cast<size_t>(s.time_column)].toString());
  SLUICE_USER_CHECK(s.unbounded || s.preceding >= 0, "OVER frame offset must be >= 0, but is {}", s.preceding);
}

// Flink's registerCleanupTimer: the state may go once the newest row's frame is over.
int64_t maxCleanupTime(int64_t time, int64_t preceding) {
  return time + static_cast<int64_t>(static_cast<double>(preceding) * 1.5) + 1;
}

}  // namespace

struct OverAggregateOperator::Impl {
  Impl(const RowType& in, OverSpec s)
      : input_type(in),
        spec(std::move(s)),
        mode(modeOf(spec)),
        keys(in, spec.partition_keys),
        rows(agg::rowCodec(in)),
        handler(in, spec.calls, /*with_retraction=*/!spec.unbounded),
        scratch(in) {}

  RowType input_type;
  OverSpec spec;
  Mode mode;
  agg::KeyCodec keys;
  agg::KeyCodec rows;
  agg::AggsHandler handler;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  AccState* acc = nullptr;
  InputState* input = nullptr;
  LongState* last_ts = nullptr;
  LongState* counter = nullptr;
  LongState* cleanup_ts = nullptr;
  runtime::state::InternalTimerService* timers = nullptr;
  std::set<int64_t> scheduled;  ///< processing times scheduled on the task's ProcessingTimeService
  std::vector<uint64_t> hashes;
  std::string key_buf, row_buf;
  std::vector<agg::AggValue> values;
  RowBatch scratch;  ///< one decoded row to accumulate / retract
  RowBatch* out = nullptr;

  int64_t offset() const { return spec.rows ? spec.preceding + 1 : spec.preceding; }

  agg::Accumulators& accumulators() {
    if (agg::Accumulators* a = acc->value()) return *a;
    agg::Accumulators& a = acc->valueOrInsert();
    handler.init(a);
    return a;
  }
  const RowBatch& decode(const std::string& row) {
    scratch.clear();
    rows.decodeAppend(row, scratch, 0);
    scratch.kinds().push_back(RowKind::kInsert);
    return scratch;
  }
  void accumulate(agg::Accumulators& a, const std::string& row) { handler.accumulate(a, decode(row), 0); }
  void retract(agg::Accumulators& a, const std::string& row) { handler.retract(a, decode(row), 0); }
  void emit(const std::string& row) {
    rows.decodeAppend(row, *out, 0);
    handler.appendValues(values, *out, input_type.size());
    out->kinds().push_back(RowKind::kInsert);
  }
  void emit(const RowBatch& batch, size_t row) {
    for (size_t c = 0; c < input_type.size(); ++c) out->column(c).appendFrom(batch.column(c), row);
    handler.appendValues(values, *out, input_type.size());
    out->kinds().push_back(RowKind::kInsert);
  }
  void buffer(int64_t time, std::string row) { input->valueOrInsert()[time].push_back(std::move(row)); }
  bool buffered(int64_t time) {
    const Buffer* b = input->value();
    return b != nullptr && b->count(time) != 0;
  }
  /// Retracts and drops the rows of every time < `limit`.
  void retractBefore(agg::Accumulators& a, Buffer& b, int64_t limit) {
    auto end = b.lower_bound(limit);
    for (auto it = b.begin(); it != end; ++it)
      for (const std::string& r : it->second) retract(a, r);
    b.erase(b.begin(), end);
  }
  // registerCleanupTimer of the RANGE functions, on either time domain.
  void registerCleanup(int64_t time, bool event_time) {
    const int64_t* cur = cleanup_ts->value();
    if (cur != nullptr && *cur >= time + spec.preceding + 1) return;
    const int64_t at = maxCleanupTime(time, spec.preceding);
    if (event_time) timers->registerEventTimeTimer({}, at);
    else timers->registerProcessingTimeTimer({}, at);
    cleanup_ts->update(at);
  }
  void clearKey() {
    input->clear();
    acc->clear();
    last_ts->clear();
    cleanup_ts->clear();
  }

  void onEventTime(int64_t time);
  void onProcessingTime(int64_t time);
  void processProcTimeRows(const RowBatch& batch, size_t row, int64_t now);
};

// AbstractRowTimeUnboundedPrecedingOver.onTimer, RowTimeRowsBoundedPrecedingFunction.onTimer,
// RowTimeRangeBoundedPrecedingFunction.onTimer (the backend's current key is the timer's key).
void OverAggregateOperator::Impl::onEventTime(int64_t time) {
  if (mode == Mode::kRowTimeUnbounded) {
    Buffer* b = input->value();
    if (b == nullptr) return;
    const int64_t watermark = timers->currentWatermark();
    agg::Accumulators& a = accumulators();
    while (!b->empty() && b->begin()->first <= watermark) {
      const Rows& list = b->begin()->second;
      if (spec.rows) {
        for (const std::string& r : list) {
          accumulate(a, r);
          handler.getValue(a, values);
          emit(r);
        }
      } else {
        for (const std::string& r : list) accumulate(a, r);
        handler.getValue(a, values);
        for (const std::string& r : list) emit(r);
      }
      b->erase(b->begin());
    }
    if (b->empty()) input->clear();
    else timers->registerEventTimeTimer({}, watermark + 1);
    return;
  }
  if (mode == Mode::kRowTimeRange) {
    const int64_t* cleanup = cleanup_ts->value();
    if (cleanup != nullptr && *cleanup <= time) {
      clearKey();
      return;
    }
  }
  Buffer* b = input->value();
  auto found = b != nullptr ? b->find(time) : Buffer::iterator();
  if (b != nullptr && found != b->end()) {
    const Rows current = found->second;
    agg::Accumulators& a = accumulators();
    if (mode == Mode::kRowTimeRows) {
      const int64_t* stored = counter->value();
      int64_t count = stored ? *stored : 0;
      for (const std::string& r : current) {
        if (count >= offset()) {
          // The oldest buffered row: smallest time, then arrival (it may be one of this time's own).
          Rows& oldest = b->begin()->second;
          retract(a, oldest.front());
          oldest.erase(oldest.begin());
          if (oldest.empty()) b->erase(b->begin());
        } else {
          ++count;
        }
        accumulate(a, r);
        handler.getValue(a, values);
        emit(r);
      }
      counter->update(count);
    } else {
      retractBefore(a, *b, time - spec.preceding);
      for (const std::string& r : current) accumulate(a, r);
      handler.getValue(a, values);
      for (const std::string& r : current) emit(r);
    }
  }
  last_ts->update(time);
}

// ProcTimeRangeBoundedPrecedingFunction.onTimer: the rows that arrived at time - 1.
void OverAggregateOperator::Impl::onProcessingTime(int64_t time) {
  const int64_t arrival = time - 1;
  Buffer* b = input->value();
  auto found = b != nullptr ? b->find(arrival) : Buffer::iterator();
  if (b != nullptr && found != b->end()) {
    const Rows current = found->second;
    agg::Accumulators& a = accumulators();
    retractBefore(a, *b, arrival - spec.preceding);
    for (const std::string& r : current) accumulate(a, r);
    handler.getValue(a, values);
    for (const std::string& r : current) emit(r);
  }
  const int64_t* cleanup = cleanup_ts->value();
  if (cleanup != nullptr && *cleanup <= time) clearKey();
}

// ProcTimeRowsBoundedPrecedingFunction.processElement.
void OverAggregateOperator::Impl::processProcTimeRows(const RowBatch& batch, size_t row, int64_t now) {
  agg::Accumulators& a = accumulators();
  const int64_t* stored_count = counter->value();
  const int64_t count = stored_count ? *stored_count : 0;
  Buffer& b = input->valueOrInsert();
  if (count == offset() && !b.empty()) {
    // The oldest row: the first of the smallest arrival time (Flink's smallestTSState).
    Rows& oldest = b.begin()->second;
    retract(a, oldest.front());
    oldest.erase(oldest.begin());
    if (oldest.empty()) b.erase(b.begin());
  } else if (count < offset()) {
    counter->update(count + 1);
  }
  rows.encode(batch, row, row_buf);
  b[now].push_back(row_buf);
  handler.accumulate(a, batch, row);
  handler.getValue(a, values);
  emit(batch, row);
}

RowType OverAggregateOperator::outputType(const RowType& input_type, const OverSpec& spec) {
  return agg::keysAndAggregatesType(input_type, allColumns(input_type), spec.calls, !spec.unbounded);
}

OverAggregateOperator::OverAggregateOperator(RowType input_type, OverSpec spec)
    : output_type_(outputType(input_type, spec)) {
  validate(input_type, spec);
  impl_ = std::make_unique<Impl>(input_type, std::move(spec));
}

OverAggregateOperator::~OverAggregateOperator() = default;

size_t OverAggregateOperator::numKeys() const { return impl_->acc ? impl_->acc->size() : 0; }

size_t OverAggregateOperator::numBufferedTimes() const {
  if (impl_->input == nullptr) return 0;
  size_t n = 0;
  impl_->input->forEachKey([&](std::string_view, int32_t, std::string_view, Buffer& b) { n += b.size(); });
  return n;
}

void OverAggregateOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  namespace st = runtime::state;
  s.acc = &s.backend->getValueState(st::ValueStateDescriptor<agg::Accumulators, agg::AccumulatorsSerializer>{kAccState});
  s.input = &s.backend->getValueState(st::ValueStateDescriptor<Buffer, BufferSerializer>{kInputState});
  s.last_ts = &s.backend->getValueState(st::ValueStateDescriptor<int64_t>{kLastTriggeringTsState});
  s.counter = &s.backend->getValueState(st::ValueStateDescriptor<int64_t>{kCounterState});
  s.cleanup_ts = &s.backend->getValueState(st::ValueStateDescriptor<int64_t>{kCleanupTsState});
  s.timers = &s.backend->getInternalTimerService(kTimerService);
  if (sc.isRestored()) {
    s.acc->forEachKey([&](std::string_view key, int32_t key_group, std::string_view, agg::Accumulators& a) {
      try {
        if (!s.keys.isValid(key)) throw InputError("a key does not decode");
        s.handler.checkLayout(a);
      } catch (const InputError& e) {
        internal::rethrowRestoreError(sc, kAccState, key_group, e);
      }
    });
    s.input->forEachKey([&](std::string_view key, int32_t key_group, std::string_view, Buffer& b) {
      bool ok = s.keys.isValid(key);
      for (const auto& [t, list] : b)
        for (const std::string& r : list) ok = ok && s.rows.isValid(r);
      if (!ok)
        internal::rethrowRestoreError(sc, kInputState, key_group,
                                      InputError(fmt::format("a row does not decode as {} columns", s.input_type.size())));
    });
  }
  if (auto next = s.timers->nextProcessingTime()) scheduleProcessingTimer(*next);
}

int64_t OverAggregateOperator::processingTime() const {
  if (ctx_.processing_time_service != nullptr) return ctx_.processing_time_service->currentProcessingTime();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void OverAggregateOperator::scheduleProcessingTimer(int64_t time) {
  if (ctx_.processing_time_service == nullptr || !impl_->scheduled.insert(time).second) return;
  ctx_.processing_time_service->registerTimer(time, [this](int64_t t) {
    impl_->scheduled.erase(t);
    fireProcessingTimers(t);
    if (auto next = impl_->timers->nextProcessingTime()) scheduleProcessingTimer(*next);
  });
}

void OverAggregateOperator::fireProcessingTimers(int64_t now) {
  Impl& s = *impl_;
  RowBatch out(output_type_);
  s.out = &out;
  s.timers->advanceProcessingTime(now, [&](std::string_view, int32_t, std::string_view, int64_t t) {
    s.onProcessingTime(t);
  });
  s.out = nullptr;
  if (!out.empty()) output_->collect(std::move(out));
}

void OverAggregateOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.acc != nullptr, "OverAggregate used before open()");
  RowBatch out(output_type_);
  s.out = &out;
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  const types::Column& time_col = batch.column(static_cast<size_t>(s.spec.time_column));
  const int64_t now = s.spec.rowtime ? 0 : processingTime();
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != RowKind::kInsert)
      throw UserError(fmt::format("operator '{}': OverAggregate takes an insert-only input but got {}",
                                  ctx_.operator_name, types::shortString(batch.kind(row))));
    s.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    switch (s.mode) {
      case Mode::kProcTimeUnbounded: {
        agg::Accumulators& a = s.accumulators();
        s.handler.accumulate(a, batch, row);
        s.handler.getValue(a, s.values);
        s.emit(batch, row);
        continue;
      }
      case Mode::kProcTimeRows:
        s.processProcTimeRows(batch, row, now);
        continue;
      case Mode::kProcTimeRange: {
        s.rows.encode(batch, row, s.row_buf);
        const bool first = !s.buffered(now);
        s.buffer(now, s.row_buf);
        if (first) {
          s.timers->registerProcessingTimeTimer({}, now + 1);
          scheduleProcessingTimer(now + 1);
          s.registerCleanup(now, /*event_time=*/false);
          if (const int64_t* c = s.cleanup_ts->value()) scheduleProcessingTimer(*c);
        }
        continue;
      }
      default:
        break;
    }
    if (time_col.isNull(row))
      throw UserError("RowTime field should not be null, please convert it to a non-null long value.");
    const int64_t t = time_col.getLong(row);
    bool late;
    if (s.mode == Mode::kRowTimeUnbounded) {
      const int64_t watermark = s.timers->currentWatermark();
      late = t <= watermark;
      // One timer per key: the next watermark processes every row it passes.
      if (!late) s.timers->registerEventTimeTimer({}, watermark < 0 ? 0 : watermark + 1);
    } else {
      const int64_t* last = s.last_ts->value();
      late = t <= (last ? *last : 0);
      if (!late && !s.buffered(t)) s.timers->registerEventTimeTimer({}, t);
    }
    if (late) {
      ++num_late_records_dropped_;
      if (ctx_.metrics != nullptr) ctx_.metrics->num_late_records_dropped.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    s.rows.encode(batch, row, s.row_buf);
    s.buffer(t, s.row_buf);
    if (s.mode == Mode::kRowTimeRange) s.registerCleanup(t, /*event_time=*/true);
  }
  s.out = nullptr;
  if (!out.empty()) output_->collect(std::move(out));
}

void OverAggregateOperator::processWatermark(runtime::Watermark mark) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "OverAggregate used before open()");
  if (s.spec.rowtime) {
    RowBatch out(output_type_);
    s.out = &out;
    s.timers->advanceWatermark(mark.timestamp, [&](std::string_view, int32_t, std::string_view, int64_t t) {
      s.onEventTime(t);
    });
    s.out = nullptr;
    if (!out.empty()) output_->collect(std::move(out));
  }
  output_->emitWatermark(mark);
}

void OverAggregateOperator::endInput() {
  if (impl_->mode == Mode::kProcTimeRange) fireProcessingTimers(INT64_MAX);
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeOverAggregateFactory(RowType input_type, OverSpec spec) {
  OverAggregateOperator probe(input_type, spec);
  // Sorted by the partition keys in BATCH mode and during backlog (FLIP-327); a key's rows keep their order.
  std::vector<int> keys = spec.partition_keys;
  return runtime::makeKeyedRowOperatorFactory(
      [input_type, spec = std::move(spec)] { return std::make_unique<OverAggregateOperator>(input_type, spec); },
      input_type, std::move(keys));
}

}  // namespace sluice::table

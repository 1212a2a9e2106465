#include "table/runtime/temporal_sort.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/network/record_writer.h"
#include "runtime/state/internal_timer_service.h"
#include "runtime/time/processing_time_service.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/sort_key_codec.h"

namespace sluice::table {

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

/// The sort key bytes of the ORDER BY columns after the time, and the row's KeyCodec bytes.
using Entry = std::pair<std::string, std::string>;
using Entries = std::vector<Entry>;
using RowTimeData = runtime::state::MapState<int64_t, Entries>;
using ProcTimeData = runtime::state::ListState<Entry>;
using LongState = runtime::state::ValueState<int64_t>;

// Flink's state names (RowTimeSortOperator, ProcTimeSortOperator) and the timer service's.
constexpr const char* kDataState = "dataState";
constexpr const char* kLastTriggeringTsState = "lastTriggeringTsState";
constexpr const char* kTimerService = "user-timers";

}  // namespace

struct TemporalSortOperator::Impl {
  Impl(const RowType& in, std::vector<SortField> o, bool rt)
      : input_type(in),
        order(std::move(o)),
        rowtime(rt),
        secondary(in, std::vector<SortField>(order.begin() + 1, order.end())),
        rows(agg::rowCodec(in)),
        none(in, {}) {}

  RowType input_type;
  std::vector<SortField> order;
  bool rowtime;
  SortKeyCodec secondary;  ///< the ORDER BY columns after the time
  agg::KeyCodec rows;
  agg::KeyCodec none;  ///< the empty key: every row is in one partition
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  RowTimeData* rowtime_data = nullptr;
  ProcTimeData* proctime_data = nullptr;
  LongState* last_ts = nullptr;
  runtime::state::InternalTimerService* timers = nullptr;
  std::set<int64_t> scheduled;  ///< processing times scheduled on the task's ProcessingTimeService
  std::string key_buf;
  int32_t key_group = 0;

  bool sortsOnProcTime() const { return !rowtime && order.size() > 1; }
  void setKey() { backend->setCurrentKey(key_buf, key_group); }

  /// Emits `entries` sorted by their sort keys (stable) into `out`.
  void emitSorted(Entries& entries, RowBatch& out) const {
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.first < b.first; });
    for (const Entry& e : entries) {
      rows.decodeAppend(e.second, out, 0);
      out.kinds().push_back(RowKind::kInsert);
    }
  }
};

TemporalSortOperator::TemporalSortOperator(RowType input_type, std::vector<SortField> order, bool rowtime) {
  SLUICE_USER_CHECK(!order.empty(), "a temporal sort needs an ORDER BY column");
  const SortField& time = order[0];
  SLUICE_USER_CHECK(time.column >= 0 && static_cast<size_t>(time.column) < input_type.size(),
                    "temporal sort column {} out of range (input has {} columns)", time.column, input_type.size());
  SLUICE_USER_CHECK(time.ascending, "Sort on a time attribute supports ascending order only");
  if (rowtime) {
    SLUICE_USER_CHECK(input_type.types[static_cast<size_t>(time.column)].isTimestampFamily(),
                      "row-time column {} of a temporal sort is not a TIMESTAMP", time.column);
  }
  impl_ = std::make_unique<Impl>(input_type, std::move(order), rowtime);
}

TemporalSortOperator::~TemporalSortOperator() = default;

size_t TemporalSortOperator::numBufferedRows() const {
  size_t n = 0;
  if (impl_->rowtime_data != nullptr) {
    impl_->rowtime_data->forEachKey([&](std::string_view, int32_t, std::string_view, auto& m) {
      for (const auto& [t, entries] : m) n += entries.size();
    });
  }
  if (impl_->proctime_data != nullptr) {
    impl_->proctime_data->forEachKey([&](std::string_view, int32_t, std::string_view, std::vector<Entry>& l) {
      n += l.size();
    });
  }
  return n;
}

void TemporalSortOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  namespace st = runtime::state;
  // The one key: the empty key's bytes in the key group of its hash (what a HASH exchange on no columns
  // would pick; the GLOBAL exchange sends everything to this one subtask).
  {
    const RowBatch empty(s.input_type);
    s.none.encode(empty, 0, s.key_buf);  // no columns: reads no row
    s.key_group = internal::keyGroupOf(runtime::hashKey(empty, 0, {}), *s.backend);
  }
  if (s.rowtime) {
    s.rowtime_data = &s.backend->getMapState(st::MapStateDescriptor<int64_t, Entries>{kDataState});
    s.last_ts = &s.backend->getValueState(st::ValueStateDescriptor<int64_t>{kLastTriggeringTsState});
  } else if (s.sortsOnProcTime()) {
    s.proctime_data = &s.backend->getListState(st::ListStateDescriptor<Entry>{kDataState});
  }
  s.timers = &s.backend->getInternalTimerService(kTimerService);
  if (sc.isRestored()) {
    auto check = [&](int32_t key_group, const Entry& e) {
      if (!s.rows.isValid(e.second))
        internal::rethrowRestoreError(sc, kDataState, key_group,
                                      InputError(fmt::format("a row does not decode as {} columns", s.input_type.size())));
    };
    if (s.rowtime_data != nullptr) {
      s.rowtime_data->forEachKey([&](std::string_view, int32_t key_group, std::string_view, auto& m) {
        for (const auto& [t, entries] : m)
          for (const Entry& e : entries) check(key_group, e);
      });
    }
    if (s.proctime_data != nullptr) {
      s.proctime_data->forEachKey([&](std::string_view, int32_t key_group, std::string_view, std::vector<Entry>& l) {
        for (const Entry& e : l) check(key_group, e);
      });
    }
  }
  if (auto next = s.timers->nextProcessingTime()) scheduleProcessingTimer(*next);
}

int64_t TemporalSortOperator::processingTime() const {
  if (ctx_.processing_time_service != nullptr) return ctx_.processing_time_service->currentProcessingTime();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void TemporalSortOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "TemporalSort used before open()");
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != RowKind::kInsert)
      throw UserError(fmt::format("operator '{}': TemporalSort takes an insert-only input but got {}",
                                  ctx_.operator_name, types::shortString(batch.kind(row))));
  }
  if (!s.rowtime && !s.sortsOnProcTime()) {
    // Ordered by the processing time alone: arrival order is the order.
    if (!batch.empty()) output_->collect(std::move(batch));
    return;
  }
  s.setKey();
  const types::Column& time_col = batch.column(static_cast<size_t>(s.order[0].column));
  Entry e;
  if (!s.rowtime) {
    for (size_t row = 0; row < batch.numRows(); ++row) {
      s.secondary.encode(batch, row, e.first);
      s.rows.encode(batch, row, e.second);
      s.proctime_data->add(e);
    }
    // ProcTimeSortOperator: a timer 1 ms after the current processing time.
    const int64_t at = processingTime() + 1;
    s.timers->registerProcessingTimeTimer({}, at);
    scheduleProcessingTimer(at);
    return;
  }
  const int64_t* last = s.last_ts->value();
  const int64_t last_ts = last ? *last : 0;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (time_col.isNull(row))
      throw UserError("RowTime field should not be null, please convert it to a non-null long value.");
    const int64_t t = time_col.getLong(row);
    if (t <= last_ts) {
      ++num_late_records_dropped_;
      if (ctx_.metrics != nullptr) ctx_.metrics->num_late_records_dropped.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    s.secondary.encode(batch, row, e.first);
    s.rows.encode(batch, row, e.second);
    if (Entries* at = s.rowtime_data->get(t)) {
      at->push_back(e);
    } else {
      s.rowtime_data->put(t, Entries{e});
      s.timers->registerEventTimeTimer({}, t);
    }
  }
}

void TemporalSortOperator::processWatermark(runtime::Watermark mark) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "TemporalSort used before open()");
  if (s.rowtime) {
    RowBatch out(s.input_type);
    s.timers->advanceWatermark(mark.timestamp, [&](std::string_view, int32_t, std::string_view, int64_t t) {
      // RowTimeSortOperator.onEventTime: the rows of time t, sorted, then forgotten.
      if (Entries* entries = s.rowtime_data->get(t)) {
        s.emitSorted(*entries, out);
        s.rowtime_data->remove(t);
      }
      s.last_ts->update(t);
    });
    if (!out.empty()) output_->collect(std::move(out));
  }
  output_->emitWatermark(mark);
}

void TemporalSortOperator::scheduleProcessingTimer(int64_t time) {
  if (ctx_.processing_time_service == nullptr || !impl_->scheduled.insert(time).second) return;
  ctx_.processing_time_service->registerTimer(time, [this](int64_t t) {
    impl_->scheduled.erase(t);
    fireProcessingTimers(t);
  });
}

void TemporalSortOperator::fireProcessingTimers(int64_t now) {
  Impl& s = *impl_;
  if (s.proctime_data == nullptr) return;
  bool due = false;
  s.timers->advanceProcessingTime(now, [&](std::string_view, int32_t, std::string_view, int64_t) { due = true; });
  if (!due) return;
  // ProcTimeSortOperator.onProcessingTime: every buffered row, sorted.
  s.setKey();
  std::vector<Entry>* entries = s.proctime_data->get();
  if (entries == nullptr) return;
  RowBatch out(s.input_type);
  s.emitSorted(*entries, out);
  s.proctime_data->clear();
  if (!out.empty()) output_->collect(std::move(out));
}

void TemporalSortOperator::endInput() {
  if (impl_->proctime_data != nullptr) fireProcessingTimers(INT64_MAX);
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeTemporalSortFactory(RowType input_type,
                                                                               std::vector<SortField> order,
                                                                               bool rowtime) {
  TemporalSortOperator probe(input_type, order, rowtime);
  return runtime::makeOperatorFactory([input_type, order = std::move(order), rowtime] {
    return std::make_unique<TemporalSortOperator>(input_type, order, rowtime);
  });
}

}  // namespace sluice::table

#include "table/runtime/session_window_aggregate.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/network/record_writer.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/window_aggregate.h"

namespace sluice::table {

using types::LogicalType;
using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

constexpr const char* kSessionStateName = "session-windows";
constexpr const char* kTimerServiceName = "window-timers";
constexpr const char* kWatermarkStateName = "watermark";

/// One pending session of a key: the window [start, end), the arrival number of its first row and its
/// accumulators.
struct Session {
  int64_t start = 0;
  int64_t end = 0;
  uint64_t seq = 0;
  agg::Accumulators acc;
};

/// The value of "session-windows": a key's pending sessions, ordered by start, pairwise disjoint and not
/// touching (touching sessions have been merged).
struct SessionSet {
  std::vector<Session> sessions;
};

/// varint number of sessions, then per session int64 start, int64 end, varint seq, AccumulatorsSerializer.
struct SessionSetSerializer {
  static void serialize(const SessionSet& v, runtime::DataOutputView& out) {
    out.writeVarUint(v.sessions.size());
    for (const Session& s : v.sessions) {
      runtime::TypeSerializer<int64_t>::serialize(s.start, out);
      runtime::TypeSerializer<int64_t>::serialize(s.end, out);
      out.writeVarUint(s.seq);
      agg::AccumulatorsSerializer::serialize(s.acc, out);
    }
  }
  static SessionSet deserialize(runtime::DataInputView& in) {
    SessionSet v;
    // Each session takes at least 16 bytes of bounds, a seq byte and the accumulators' version byte.
    const size_t n = in.readLength(18);
    v.sessions.resize(n);
    for (Session& s : v.sessions) {
      s.start = runtime::TypeSerializer<int64_t>::deserialize(in);
      s.end = runtime::TypeSerializer<int64_t>::deserialize(in);
      s.seq = in.readVarUint();
      s.acc = agg::AccumulatorsSerializer::deserialize(in);
    }
    return v;
  }
  static SessionSet copy(const SessionSet& v) {
    SessionSet out;
    out.sessions.reserve(v.sessions.size());
    for (const Session& s : v.sessions)
      out.sessions.push_back(Session{s.start, s.end, s.seq, agg::AccumulatorsSerializer::copy(s.acc)});
    return out;
  }
};

using SessionState = runtime::state::ValueState<SessionSet, SessionSetSerializer>;

void encodeEnd(int64_t end, std::string& out) {
  out.resize(8);
  const auto u = static_cast<uint64_t>(end);
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(u >> (56 - 8 * i));
}

bool decodeEnd(std::string_view ns, int64_t& end) {
  if (ns.size() != 8) return false;
  uint64_t u = 0;
  for (char c : ns) u = (u << 8) | static_cast<uint8_t>(c);
  end = static_cast<int64_t>(u);
  return true;
}

/// t + gap, saturated at INT64_MAX (a row time near the end of time opens a window that never fires early).
int64_t sessionEnd(int64_t t, int64_t gap) {
  int64_t end;
  return __builtin_add_overflow(t, gap, &end) ? INT64_MAX : end;
}

}  // namespace

struct SessionWindowAggregateOperator::Impl {
  Impl(const RowType& input_type, std::vector<int> group_keys, const std::vector<AggregateCall>& calls)
      : keys(input_type, std::move(group_keys)), handler(input_type, calls, /*with_retraction=*/false) {}

  /// A fired (key, session), held until the watermark's timers have all fired so they leave in order.
  struct Fired {
    int64_t start;
    int64_t end;
    uint64_t seq;
    std::string key;
    agg::Accumulators acc;
  };

  agg::KeyCodec keys;
  agg::AggsHandler handler;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;  ///< when ctx.state is null
  runtime::state::KeyedStateBackend* backend = nullptr;
  SessionState* sessions = nullptr;
  runtime::state::InternalTimerService* timers = nullptr;
  runtime::state::PartitionableListState<int64_t>* watermark_state = nullptr;
  uint64_t next_seq = 0;  ///< above every stored session's seq, restored ones included
  std::vector<Fired> fired;
  std::vector<uint64_t> hashes;
  std::string key_buf;
  std::string ns_buf;
  std::vector<agg::AggValue> values;
};

SessionWindowAggregateOperator::SessionWindowAggregateOperator(RowType input_type, WindowSpec window,
                                                               std::vector<int> group_keys,
                                                               std::vector<AggregateCall> calls)
    : output_type_(WindowAggregateOperator::outputType(input_type, group_keys, calls)),
      window_(window),
      shift_(window.time_zone) {
  SLUICE_CHECK(window_.kind == WindowSpec::Kind::kSession, "SessionWindowAggregateOperator needs a SESSION window");
  SLUICE_USER_CHECK(window_.time_index >= 0 && static_cast<size_t>(window_.time_index) < input_type.size(),
                    "window time column {} out of range (input has {} columns)", window_.time_index,
                    input_type.size());
  const LogicalType& time_type = input_type.types[static_cast<size_t>(window_.time_index)];
  SLUICE_USER_CHECK(time_type.id == types::TypeId::kTimestamp || time_type.id == types::TypeId::kTimestampLtz ||
                        time_type.id == types::TypeId::kBigInt,
                    "window time column {} must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), but is {}", window_.time_index,
                    time_type.toString());
  // SessionWindowAssigner's check.
  SLUICE_USER_CHECK(window_.size_ms > 0, "SESSION window parameters must satisfy gap > 0, but got gap {}ms",
                    window_.size_ms);
  impl_ = std::make_unique<Impl>(input_type, std::move(group_keys), calls);
}

SessionWindowAggregateOperator::~SessionWindowAggregateOperator() = default;

size_t SessionWindowAggregateOperator::numPendingWindows() const {
  if (impl_->sessions == nullptr) return 0;
  size_t n = 0;
  impl_->sessions->forEachKey(
      [&](std::string_view, int32_t, std::string_view, SessionSet& v) { n += v.sessions.size(); });
  return n;
}

size_t SessionWindowAggregateOperator::numKeysWithState() const {
  return impl_->sessions == nullptr ? 0 : impl_->sessions->size();
}

size_t SessionWindowAggregateOperator::numTimers() const {
  return impl_->timers == nullptr ? 0 : impl_->timers->numEventTimeTimers();
}

void SessionWindowAggregateOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  s.sessions = &s.backend->getValueState(
      runtime::state::ValueStateDescriptor<SessionSet, SessionSetSerializer>{kSessionStateName});
  s.timers = &s.backend->getInternalTimerService(kTimerServiceName);
  s.watermark_state =
      &sc.operatorStateBackend().getUnionListState(runtime::state::ListStateDescriptor<int64_t>{kWatermarkStateName});
  if (!sc.isRestored()) return;
  const std::vector<int64_t>& marks = s.watermark_state->get();
  if (!marks.empty()) current_watermark_ = *std::min_element(marks.begin(), marks.end());
  s.sessions->forEachKey([&](std::string_view key, int32_t key_group, std::string_view ns, SessionSet& v) {
    try {
      if (!s.keys.isValid(key)) throw InputError("a key does not decode");
      if (!ns.empty()) throw InputError(fmt::format("a namespace of {} bytes (expected none)", ns.size()));
      if (v.sessions.empty()) throw InputError("a key without sessions");
      for (size_t i = 0; i < v.sessions.size(); ++i) {
        Session& w = v.sessions[i];
        if (w.start >= w.end) throw InputError(fmt::format("a session [{}, {}) that is empty", w.start, w.end));
        if (i > 0 && v.sessions[i - 1].end >= w.start)
          throw InputError(fmt::format("sessions [.., {}) and [{}, ..) that touch or are out of order",
                                       v.sessions[i - 1].end, w.start));
        s.handler.checkLayout(w.acc);
      }
    } catch (const InputError& e) {
      internal::rethrowRestoreError(sc, kSessionStateName, key_group, e);
    }
    for (const Session& w : v.sessions) s.next_seq = std::max(s.next_seq, w.seq + 1);
  });
}

void SessionWindowAggregateOperator::snapshotState(int64_t checkpoint_id) {
  (void)checkpoint_id;
  SLUICE_CHECK(impl_->watermark_state != nullptr, "SessionWindowAggregate snapshot before open()");
  impl_->watermark_state->update({current_watermark_});
}

void SessionWindowAggregateOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.sessions != nullptr, "SessionWindowAggregate used before open()");
  const types::Column& time_col = batch.column(static_cast<size_t>(window_.time_index));
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != RowKind::kInsert) {
      throw UserError(fmt::format("window aggregate does not support update/delete input (got a {} row)",
                                  types::shortString(batch.kind(row))));
    }
    if (time_col.isNull(row)) {
      // SessionUnsliceAssigner.getUtcTimestamp fails the job on a NULL row time.
      throw UserError("RowTime field should not be null, please convert it to a non-null long value.");
    }
    // SessionUnsliceAssigner: sessions live on the shift time zone's wall clock.
    const int64_t t = shift_.toUtcTimestampMills(time_col.getLong(row));
    const int64_t end = sessionEnd(t, window_.size_ms);
    s.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    s.sessions->setCurrentNamespace({});
    SessionSet* set = s.sessions->value();
    // The sessions [first, last) of this key that [t, end) intersects or touches.
    size_t first = 0, last = 0;
    if (set != nullptr) {
      auto& v = set->sessions;
      while (first < v.size() && v[first].end < t) ++first;
      last = first;
      while (last < v.size() && v[last].start <= end) ++last;
    }
    if (first == last) {
      // A window of its own: late when it has fired already (MergingWindowProcessFunction.isWindowLate).
      if (shift_.isWindowFired(end, current_watermark_)) {
        ++num_late_records_dropped_;
        if (ctx_.metrics != nullptr) ctx_.metrics->num_late_records_dropped.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (set == nullptr) set = &s.sessions->valueOrInsert();
      Session fresh;
      fresh.start = t;
      fresh.end = end;
      fresh.seq = s.next_seq++;
      s.handler.init(fresh.acc);
      s.handler.accumulate(fresh.acc, batch, row);
      set->sessions.insert(set->sessions.begin() + static_cast<std::ptrdiff_t>(first), std::move(fresh));
      encodeEnd(end, s.ns_buf);
      s.timers->registerEventTimeTimer(s.ns_buf, shift_.toEpochMillsForTimer(end - 1));
      continue;
    }
    // Merge [first, last) and the row's window into the first session (the earliest in time).
    auto& v = set->sessions;
    Session& into = v[first];
    const int64_t merged_end = std::max(end, v[last - 1].end);
    for (size_t i = first; i < last; ++i) {
      if (v[i].end == merged_end) continue;  // its timer stays the merged session's
      encodeEnd(v[i].end, s.ns_buf);
      s.timers->deleteEventTimeTimer(s.ns_buf, shift_.toEpochMillsForTimer(v[i].end - 1));
    }
    for (size_t i = first + 1; i < last; ++i) {
      s.handler.merge(into.acc, v[i].acc);
      into.seq = std::min(into.seq, v[i].seq);
    }
    into.start = std::min(into.start, t);
    into.end = merged_end;
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(first) + 1, v.begin() + static_cast<std::ptrdiff_t>(last));
    encodeEnd(merged_end, s.ns_buf);
    s.timers->registerEventTimeTimer(s.ns_buf, shift_.toEpochMillsForTimer(merged_end - 1));
    s.handler.accumulate(into.acc, batch, row);
  }
}

void SessionWindowAggregateOperator::processWatermark(runtime::Watermark mark) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "SessionWindowAggregate used before open()");
  if (mark.timestamp > current_watermark_) {
    current_watermark_ = mark.timestamp;
    s.timers->advanceWatermark(current_watermark_, [&](std::string_view key, int32_t, std::string_view ns, int64_t) {
      int64_t end;
      if (!decodeEnd(ns, end)) {
        throw InputError(fmt::format("operator '{}': restored timer of '{}' with a {}-byte window namespace",
                                     ctx_.uid, kTimerServiceName, ns.size()));
      }
      s.sessions->setCurrentNamespace({});
      SessionSet* set = s.sessions->value();
      if (set == nullptr) return;
      auto& v = set->sessions;
      auto it = std::find_if(v.begin(), v.end(), [&](const Session& w) { return w.end == end; });
      if (it == v.end()) return;
      s.fired.push_back(Impl::Fired{it->start, it->end, it->seq, std::string(key), std::move(it->acc)});
      v.erase(it);
      if (v.empty()) s.sessions->clear();
    });
    if (!s.fired.empty()) {
      std::sort(s.fired.begin(), s.fired.end(), [](const Impl::Fired& a, const Impl::Fired& b) {
        return a.end != b.end ? a.end < b.end : a.seq < b.seq;
      });
      RowBatch out(output_type_);
      const size_t num_keys = s.keys.keyColumns().size();
      const size_t start_col = num_keys + s.handler.numAggs();
      for (const Impl::Fired& f : s.fired) {
        s.keys.decodeAppend(f.key, out, 0);
        s.handler.getValue(f.acc, s.values);
        s.handler.appendValues(s.values, out, num_keys);
        out.column(start_col).appendLong(f.start);
        out.column(start_col + 1).appendLong(f.end);
        out.kinds().push_back(RowKind::kInsert);
      }
      s.fired.clear();
      output_->collect(std::move(out));
    }
  }
  output_->emitWatermark(mark);
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeSessionWindowAggregateFactory(
    RowType input_type, WindowSpec window, std::vector<int> group_keys, std::vector<AggregateCall> calls) {
  SessionWindowAggregateOperator probe(input_type, window, group_keys, calls);
  return runtime::makeOperatorFactory([input_type = std::move(input_type), window = std::move(window),
                                       group_keys = std::move(group_keys), calls = std::move(calls)] {
    return std::make_unique<SessionWindowAggregateOperator>(input_type, window, group_keys, calls);
  });
}

}  // namespace sluice::table

#include "table/runtime/interval_join.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "runtime/operators/keyed_input_sorter.h"
#include "runtime/network/record_writer.h"
#include "runtime/serialization/type_serializer.h"
#include "runtime/state/internal_timer_service.h"
#include "runtime/time/processing_time_service.h"
#include "table/functions/evaluator.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/streaming_join.h"

namespace sluice::table {

/// A cached row of one side (Flink's Tuple2<RowData, Boolean>): the row (KeyCodec form) and whether it
/// joined a row of the other side (only tracked for outer sides).
struct IntervalCachedRow {
  std::string row;
  bool joined = false;
};
SLUICE_TYPE(IntervalCachedRow, row, joined)

using types::RowBatch;
using types::RowKind;
using types::RowType;

std::string IntervalJoinBounds::toString() const {
  return fmt::format("isRowTime={}, leftLowerBound={}, leftUpperBound={}, leftTimeIndex={}, rightTimeIndex={}",
                     is_event_time ? "true" : "false", left_lower_bound, left_upper_bound, left_time_index,
                     right_time_index);
}

namespace {

using CachedRows = std::vector<IntervalCachedRow>;
/// Flink's MapState<Long, List<Tuple2<RowData, Boolean>>> as one ordered value per key: the rows in a time
/// range are found without a scan, and RocksDB keeps no tombstone per expired time (as OverAggregate's
/// inputState).
using Cache = std::map<int64_t, CachedRows>;

/// varint number of times, then per time its int64 and the rows.
struct CacheSerializer {
  static void serialize(const Cache& c, runtime::DataOutputView& out) {
    out.writeVarUint(c.size());
    for (const auto& [t, rows] : c) {
      runtime::TypeSerializer<int64_t>::serialize(t, out);
      runtime::TypeSerializer<CachedRows>::serialize(rows, out);
    }
  }
  static Cache deserialize(runtime::DataInputView& in) {
    Cache c;
    const size_t n = in.readLength(9);
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = runtime::TypeSerializer<int64_t>::deserialize(in);
      c.emplace(t, runtime::TypeSerializer<CachedRows>::deserialize(in));
    }
    return c;
  }
};

using CacheState = runtime::state::ValueState<Cache, CacheSerializer>;

constexpr const char* kTimerService = "user-timers";

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

std::vector<int> allColumns(const RowType& t) {
  std::vector<int> out;
  for (size_t i = 0; i < t.size(); ++i) out.push_back(static_cast<int>(i));
  return out;
}

struct Side {
  Side(const RowType& type, std::vector<int> join_keys, int time, int64_t relative, bool is_outer, std::string state,
       std::string timer_ns)
      : keys(type, std::move(join_keys)),
        rows(type, allColumns(type)),
        width(type.size()),
        time_index(time),
        relative_size(relative),
        outer(is_outer),
        name(std::move(state)),
        ns(std::move(timer_ns)) {}

  agg::KeyCodec keys;
  agg::KeyCodec rows;
  size_t width;
  int time_index;
  int64_t relative_size;  ///< Flink's leftRelativeSize (-lower) / rightRelativeSize (upper)
  bool outer;
  std::string name;
  std::string ns;
  CacheState* cache = nullptr;
};

void checkSpec(const RowType& left, const RowType& right, const JoinSpec& spec, const IntervalJoinBounds& b) {
  SLUICE_USER_CHECK(!spec.isSemiOrAnti(), "an interval join is INNER, LEFT, RIGHT or FULL, not {}",
                    joinTypeName(spec.type));
  SLUICE_USER_CHECK(spec.left_keys.size() == spec.right_keys.size(), "join keys: {} left, {} right",
                    spec.left_keys.size(), spec.right_keys.size());
  auto inRange = [](const std::vector<int>& cols, const RowType& t, const char* what) {
    for (int c : cols)
      SLUICE_USER_CHECK(c >= 0 && static_cast<size_t>(c) < t.size(), "{} column {} out of range (row of {})", what, c,
                        t.size());
  };
  inRange(spec.left_keys, left, "left join key");
  inRange(spec.right_keys, right, "right join key");
  if (b.is_event_time) {
    auto timeColumn = [](int c, const RowType& t, const char* what) {
      SLUICE_USER_CHECK(c >= 0 && static_cast<size_t>(c) < t.size(), "{} time column {} out of range (row of {})",
                        what, c, t.size());
      const auto id = t.types[static_cast<size_t>(c)].id;
      SLUICE_USER_CHECK(id == types::TypeId::kTimestamp || id == types::TypeId::kTimestampLtz || id == types::TypeId::kBigInt,
                        "{} time column {} must be a TIMESTAMP, but is {}", what, c,
                        t.types[static_cast<size_t>(c)].toString());
    };
    timeColumn(b.left_time_index, left, "left");
    timeColumn(b.right_time_index, right, "right");
  }
  if (spec.non_equi_condition)
    SLUICE_USER_CHECK(spec.non_equi_condition->type.id == types::TypeId::kBoolean,
                      "join condition must be BOOLEAN, is {}", spec.non_equi_condition->type.toString());
}

}  // namespace

struct IntervalJoinOperator::Impl {
  Impl(const RowType& left_type, const RowType& right_type, JoinSpec s, IntervalJoinBounds b)
      : spec(std::move(s)),
        bounds(b),
        left(left_type, spec.left_keys, b.left_time_index, -b.left_lower_bound, spec.leftIsOuter(),
             "IntervalJoinLeftCache", "l"),
        right(right_type, spec.right_keys, b.right_time_index, b.left_upper_bound, spec.rightIsOuter(),
              "IntervalJoinRightCache", "r"),
        output_type(StreamingJoinOperator::outputType(left_type, right_type, spec.type)),
        valid_window(b.left_upper_bound >= b.left_lower_bound),
        watermark_delay(valid_window ? std::max(left.relative_size, right.relative_size) : 0) {
    if (spec.non_equi_condition) {
      condition.emplace(spec.non_equi_condition);
      for (const auto& t : left_type.types) pair_type.types.push_back(t);
      for (const auto& t : right_type.types) pair_type.types.push_back(t);
      pair_type.names.assign(pair_type.types.size(), "");
    }
  }

  void process(const RowBatch& batch, bool input_is_left, int64_t now, RowBatch& out);
  /// Removes the rows of `side` (current key) with time + relative size < `time`, padding those never
  /// joined on an outer side.
  void expire(Side& side, int64_t time, RowBatch& out);
  void emitPair(const RowBatch& batch, size_t row, bool input_is_left, const Side& other, const std::string& match,
                RowBatch& out) const;
  /// [row + NULLs] in left/right order, from an input batch row or from a cached row's bytes.
  void emitPadded(const RowBatch* batch, size_t row, const std::string* bytes, bool is_left, RowBatch& out) const;
  Side& sideOf(std::string_view ns) { return ns == left.ns ? left : right; }

  JoinSpec spec;
  IntervalJoinBounds bounds;
  Side left;
  Side right;
  RowType output_type;
  bool valid_window;
  int64_t watermark_delay;
  std::optional<ExprEvaluator> condition;
  RowType pair_type;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  runtime::state::InternalTimerService* timers = nullptr;
  runtime::state::PartitionableListState<int64_t>* watermark_state = nullptr;
  int64_t watermark = std::numeric_limits<int64_t>::min();  ///< the last input watermark
  /// Processing-time timers handed to the ProcessingTimeService (not state: re-armed from the timer
  /// service after a restore).
  std::set<int64_t> scheduled;
  // Reused buffers.
  std::vector<uint64_t> hashes;
  std::string key_buf, row_buf;
  std::vector<IntervalCachedRow*> candidates;
  std::vector<uint32_t> selected;
  EvalScratch scratch;
};

IntervalJoinOperator::IntervalJoinOperator(RowType left_type, RowType right_type, JoinSpec spec,
                                           IntervalJoinBounds bounds) {
  checkSpec(left_type, right_type, spec, bounds);
  impl_ = std::make_unique<Impl>(left_type, right_type, std::move(spec), bounds);
}

IntervalJoinOperator::~IntervalJoinOperator() = default;

size_t IntervalJoinOperator::numCachedRows(bool left) const {
  const Side& s = left ? impl_->left : impl_->right;
  if (s.cache == nullptr) return 0;
  size_t n = 0;
  s.cache->forEachKey([&](std::string_view, int32_t, std::string_view, Cache& c) {
    for (const auto& [t, rows] : c) n += rows.size();
  });
  return n;
}

size_t IntervalJoinOperator::numTimers() const {
  if (impl_->timers == nullptr) return 0;
  return impl_->timers->numEventTimeTimers() + impl_->timers->numProcessingTimeTimers();
}

void IntervalJoinOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  namespace st = runtime::state;
  for (Side* side : {&s.left, &s.right}) {
    side->cache = &s.backend->getValueState(st::ValueStateDescriptor<Cache, CacheSerializer>{side->name});
    if (!sc.isRestored()) continue;
    side->cache->forEachKey([&](std::string_view key, int32_t key_group, std::string_view, Cache& c) {
      bool ok = side->keys.isValid(key);
      for (const auto& [t, rows] : c)
        for (const IntervalCachedRow& r : rows) ok = ok && side->rows.isValid(r.row);
      if (!ok)
        internal::rethrowRestoreError(sc, side->name, key_group,
                                      InputError(fmt::format("a row does not decode as {} columns", side->width)));
    });
  }
  s.timers = &s.backend->getInternalTimerService(kTimerService);
  s.watermark_state =
      &sc.operatorStateBackend().getUnionListState(runtime::state::ListStateDescriptor<int64_t>{"watermark"});
  if (sc.isRestored()) {
    const std::vector<int64_t>& marks = s.watermark_state->get();
    if (!marks.empty()) s.watermark = *std::min_element(marks.begin(), marks.end());
  }
  if (auto next = s.timers->nextProcessingTime()) scheduleProcessingTimer(*next);
}

int64_t IntervalJoinOperator::processingTime() const {
  if (ctx_.processing_time_service != nullptr) return ctx_.processing_time_service->currentProcessingTime();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void IntervalJoinOperator::scheduleProcessingTimer(int64_t time) {
  if (ctx_.processing_time_service == nullptr || !impl_->scheduled.insert(time).second) return;
  ctx_.processing_time_service->registerTimer(time, [this](int64_t t) {
    impl_->scheduled.erase(t);
    fireProcessingTimers(t);
    if (auto next = impl_->timers->nextProcessingTime()) scheduleProcessingTimer(*next);
  });
}

void IntervalJoinOperator::fireProcessingTimers(int64_t now) {
  Impl& s = *impl_;
  RowBatch out(s.output_type);
  s.timers->advanceProcessingTime(now, [&](std::string_view, int32_t, std::string_view ns, int64_t) {
    s.expire(s.sideOf(ns), now, out);
  });
  if (!out.empty()) output_->collect(std::move(out));
}

void IntervalJoinOperator::processInput(const RowBatch& batch, bool left) {
  SLUICE_CHECK(impl_->timers != nullptr, "IntervalJoin used before open()");
  RowBatch out(impl_->output_type);
  impl_->process(batch, left, impl_->bounds.is_event_time ? 0 : processingTime(), out);
  if (!out.empty()) output_->collect(std::move(out));
  if (!impl_->bounds.is_event_time)
    if (auto next = impl_->timers->nextProcessingTime()) scheduleProcessingTimer(*next);
}

void IntervalJoinOperator::processBatch(RowBatch&& batch) { processInput(batch, true); }
void IntervalJoinOperator::processBatch2(RowBatch&& batch) { processInput(batch, false); }

void IntervalJoinOperator::processWatermark(runtime::Watermark mark) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "IntervalJoin used before open()");
  if (!s.bounds.is_event_time) {
    output_->emitWatermark(mark);
    return;
  }
  RowBatch out(s.output_type);
  s.watermark = std::max(s.watermark, mark.timestamp);
  s.timers->advanceWatermark(mark.timestamp, [&](std::string_view, int32_t, std::string_view ns, int64_t) {
    s.expire(s.sideOf(ns), mark.timestamp, out);
  });
  if (!out.empty()) output_->collect(std::move(out));
  // KeyedCoProcessOperatorWithWatermarkDelay: joined rows may carry times up to the delay behind it.
  if (mark.timestamp != std::numeric_limits<int64_t>::max())
    mark.timestamp = saturatingAdd(mark.timestamp, -s.watermark_delay);
  output_->emitWatermark(mark);
}

void IntervalJoinOperator::snapshotState(int64_t checkpoint_id) {
  (void)checkpoint_id;
  SLUICE_CHECK(impl_->watermark_state != nullptr, "IntervalJoin snapshot before open()");
  impl_->watermark_state->update({impl_->watermark});
}

void IntervalJoinOperator::endInput() {
  if (!impl_->bounds.is_event_time) fireProcessingTimers(std::numeric_limits<int64_t>::max());
}

void IntervalJoinOperator::Impl::expire(Side& side, int64_t time, RowBatch& out) {
  Cache* c = side.cache->value();
  if (c == nullptr) return;
  const bool is_left = &side == &left;
  // Rows with t + size < time, i.e. t <= time - size - 1; everything once time is MAX (end of input).
  const int64_t last = time == std::numeric_limits<int64_t>::max()
                           ? time
                           : saturatingAdd(saturatingAdd(time, -side.relative_size), -1);
  auto end = c->upper_bound(last);
  for (auto it = c->begin(); it != end; ++it) {
    if (!side.outer) continue;
    for (const IntervalCachedRow& r : it->second)
      if (!r.joined) emitPadded(nullptr, 0, &r.row, is_left, out);
  }
  c->erase(c->begin(), end);
  if (c->empty()) side.cache->clear();
}

void IntervalJoinOperator::Impl::emitPair(const RowBatch& batch, size_t row, bool input_is_left, const Side& other,
                                          const std::string& match, RowBatch& out) const {
  const Side& self = input_is_left ? left : right;
  const size_t input_first = input_is_left ? 0 : left.width;
  const size_t other_first = input_is_left ? left.width : 0;
  for (size_t i = 0; i < self.width; ++i) out.column(input_first + i).appendFrom(batch.column(i), row);
  other.rows.decodeAppend(match, out, other_first);
  out.kinds().push_back(RowKind::kInsert);
}

void IntervalJoinOperator::Impl::emitPadded(const RowBatch* batch, size_t row, const std::string* bytes, bool is_left,
                                            RowBatch& out) const {
  const Side& self = is_left ? left : right;
  const Side& other = is_left ? right : left;
  const size_t self_first = is_left ? 0 : left.width;
  const size_t other_first = is_left ? left.width : 0;
  if (batch != nullptr) {
    for (size_t i = 0; i < self.width; ++i) out.column(self_first + i).appendFrom(batch->column(i), row);
  } else {
    self.rows.decodeAppend(*bytes, out, self_first);
  }
  for (size_t i = 0; i < other.width; ++i) out.column(other_first + i).appendNull();
  out.kinds().push_back(RowKind::kInsert);
}

void IntervalJoinOperator::Impl::process(const RowBatch& batch, bool input_is_left, int64_t now, RowBatch& out) {
  Side& self = input_is_left ? left : right;
  Side& other = input_is_left ? right : left;
  const bool event_time = bounds.is_event_time;
  // Flink's updateOperatorTime: the watermark (both inputs' minimum) or the clock.
  const int64_t operator_time = event_time ? watermark : now;
  const types::Column* time_col = event_time ? &batch.column(static_cast<size_t>(self.time_index)) : nullptr;
  runtime::hashKeys(batch, self.keys.keyColumns(), hashes);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != RowKind::kInsert)
      throw UserError(fmt::format("IntervalJoin doesn't support consuming update and delete changes: the {} input "
                                  "sent {}",
                                  input_is_left ? "left" : "right", types::shortString(batch.kind(row))));
    if (time_col != nullptr && time_col->isNull(row))
      throw UserError(
          fmt::format("IntervalJoin: the row time of the {} input is NULL", input_is_left ? "left" : "right"));
    const int64_t t = event_time ? time_col->getLong(row) : now;
    self.keys.encode(batch, row, key_buf);
    backend->setCurrentKey(key_buf, internal::keyGroupOf(hashes[row], *backend));
    bool joined = false;
    if (valid_window) {
      // The other side's rows this one may join: other time in [t - other size, t + own size].
      const int64_t lower = saturatingAdd(t, -other.relative_size);
      const int64_t upper = saturatingAdd(t, self.relative_size);
      bool null_key = false;
      for (int k : self.keys.keyColumns()) null_key = null_key || batch.column(static_cast<size_t>(k)).isNull(row);
      Cache* oc = null_key ? nullptr : other.cache->value();
      candidates.clear();
      if (oc != nullptr)
        for (auto it = oc->lower_bound(lower); it != oc->end() && it->first <= upper; ++it)
          for (IntervalCachedRow& r : it->second) candidates.push_back(&r);
      if (!candidates.empty() && condition) {
        RowBatch pairs(pair_type);
        const size_t input_first = input_is_left ? 0 : left.width;
        const size_t other_first = input_is_left ? left.width : 0;
        for (const IntervalCachedRow* c : candidates) {
          for (size_t i = 0; i < self.width; ++i) pairs.column(input_first + i).appendFrom(batch.column(i), row);
          other.rows.decodeAppend(c->row, pairs, other_first);
          pairs.kinds().push_back(RowKind::kInsert);
        }
        condition->evaluateFilter(pairs, selected, &scratch);
      } else {
        selected.resize(candidates.size());
        for (size_t i = 0; i < candidates.size(); ++i) selected[i] = static_cast<uint32_t>(i);
      }
      for (uint32_t i : selected) {
        emitPair(batch, row, input_is_left, other, candidates[i]->row, out);
        if (other.outer) candidates[i]->joined = true;
        joined = true;
      }
      // Cached while rows of the other side that may still match can come (Flink: otherOperatorTime <
      // qualified upper bound), until the cleanup timer at t + own size + 1.
      if (operator_time < upper) {
        self.rows.encode(batch, row, row_buf);
        self.cache->valueOrInsert()[t].push_back(IntervalCachedRow{row_buf, joined});
        const int64_t cleanup = saturatingAdd(upper, 1);
        if (event_time) timers->registerEventTimeTimer(self.ns, cleanup);
        else timers->registerProcessingTimeTimer(self.ns, cleanup);
        continue;
      }
    }
    if (!joined && self.outer) emitPadded(&batch, row, nullptr, input_is_left, out);
  }
}

namespace {

// On event time both inputs are sorted by their join keys in BATCH mode and during backlog (FLIP-327): the
// watermark is held while sorting, so every row is still cached when the other side's rows come. Not on
// processing time, whose rows take the time they arrive at.
class IntervalJoinFactory : public runtime::KeyedTwoInputRowOperatorFactory {
 public:
  IntervalJoinFactory(RowType left, RowType right, JoinSpec spec, IntervalJoinBounds bounds, int first_edges)
      : KeyedTwoInputRowOperatorFactory(left, right, spec.left_keys, spec.right_keys, first_edges,
                                        bounds.is_event_time),
        left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)),
        bounds_(bounds) {}
  std::unique_ptr<runtime::StreamOperator> createOperator() const override {
    return std::make_unique<IntervalJoinOperator>(left_, right_, spec_, bounds_);
  }

 private:
  RowType left_;
  RowType right_;
  JoinSpec spec_;
  IntervalJoinBounds bounds_;
};

}  // namespace

std::shared_ptr<const runtime::StreamOperatorFactory> makeIntervalJoinFactory(RowType left_type, RowType right_type,
                                                                              JoinSpec spec, IntervalJoinBounds bounds,
                                                                              int num_first_input_edges) {
  IntervalJoinOperator probe(left_type, right_type, spec, bounds);
  return std::make_shared<IntervalJoinFactory>(std::move(left_type), std::move(right_type), std::move(spec), bounds,
                                               num_first_input_edges);
}

}  // namespace sluice::table

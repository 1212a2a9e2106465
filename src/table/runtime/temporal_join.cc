#include "table/runtime/temporal_join.h"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/network/record_writer.h"
#include "runtime/state/internal_timer_service.h"
#include "table/functions/evaluator.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"

namespace sluice::table {

/// A buffered left row or a version of the right side: its row time (ms), RowKind and row (KeyCodec bytes).
struct TemporalRecord {
  int64_t time = 0;
  int32_t kind = 0;
  std::string row;
};
SLUICE_TYPE(TemporalRecord, time, kind, row)

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

using Records = std::vector<TemporalRecord>;
using RecordsState = runtime::state::ValueState<Records>;
using LongState = runtime::state::ValueState<int64_t>;

// Flink's state names (TemporalRowTimeJoinOperator).
constexpr const char* kLeftState = "left";
constexpr const char* kRightState = "right";
constexpr const char* kTimerState = "timer";
constexpr const char* kTimerService = "timers";

std::vector<int> allColumns(const RowType& t) {
  std::vector<int> out;
  for (size_t i = 0; i < t.size(); ++i) out.push_back(static_cast<int>(i));
  return out;
}

void checkSpec(const RowType& left, const RowType& right, const TemporalJoinSpec& spec) {
  SLUICE_USER_CHECK(spec.type == FlinkJoinType::kInner || spec.type == FlinkJoinType::kLeft,
                    "Temporal table join currently only support INNER JOIN and LEFT JOIN, but was {}",
                    joinTypeName(spec.type));
  SLUICE_USER_CHECK(!spec.left_keys.empty() && spec.left_keys.size() == spec.right_keys.size(),
                    "temporal join keys: {} left, {} right", spec.left_keys.size(), spec.right_keys.size());
  auto inRange = [](int c, const RowType& t, const char* what) {
    SLUICE_USER_CHECK(c >= 0 && static_cast<size_t>(c) < t.size(), "{} column {} out of range (row of {})", what, c,
                      t.size());
  };
  for (int c : spec.left_keys) inRange(c, left, "left join key");
  for (int c : spec.right_keys) inRange(c, right, "right join key");
  inRange(spec.left_time, left, "left time");
  inRange(spec.right_time, right, "right time");
  SLUICE_USER_CHECK(left.types[static_cast<size_t>(spec.left_time)].isTimestampFamily() &&
                        right.types[static_cast<size_t>(spec.right_time)].isTimestampFamily(),
                    "temporal join time columns must be TIMESTAMP");
  if (spec.non_equi_condition)
    SLUICE_USER_CHECK(spec.non_equi_condition->type.id == types::TypeId::kBoolean,
                      "join condition must be BOOLEAN, is {}", spec.non_equi_condition->type.toString());
}

int64_t rowTime(const RowBatch& batch, int column, size_t row) {
  const types::Column& c = batch.column(static_cast<size_t>(column));
  if (c.isNull(row))
    throw UserError("The row time of a temporal join input is NULL; the time attribute must not be NULL");
  return c.getLong(row);
}

}  // namespace

RowType TemporalRowTimeJoinOperator::outputType(const RowType& left, const RowType& right, FlinkJoinType type) {
  RowType out = left;
  for (size_t i = 0; i < right.size(); ++i) {
    out.names.push_back(right.names[i]);
    out.types.push_back(type == FlinkJoinType::kLeft ? right.types[i].withNullable(true) : right.types[i]);
  }
  return out;
}

struct TemporalRowTimeJoinOperator::Impl {
  Impl(const RowType& l, const RowType& r, TemporalJoinSpec s)
      : left_type(l),
        right_type(r),
        spec(std::move(s)),
        output_type(outputType(l, r, spec.type)),
        left_keys(l, spec.left_keys),
        right_keys(r, spec.right_keys),
        left_rows(l, allColumns(l)),
        right_rows(r, allColumns(r)),
        left_row(l),
        pair(output_type) {
    if (spec.non_equi_condition) condition.emplace(spec.non_equi_condition);
  }

  /// Flink's registerSmallestTimer: one timer per key, at the smallest pending time.
  void registerSmallestTimer(int64_t t) {
    if (const int64_t* registered = timer->value()) {
      if (*registered <= t) return;
      timers->deleteEventTimeTimer({}, *registered);
    }
    timer->update(t);
    timers->registerEventTimeTimer({}, t);
  }

  /// The latest version with time <= t (Flink's latestRightRowToJoin), or null.
  static const TemporalRecord* versionAt(const Records& versions, int64_t t) {
    auto it = std::upper_bound(versions.begin(), versions.end(), t,
                               [](int64_t v, const TemporalRecord& r) { return v < r.time; });
    return it == versions.begin() ? nullptr : &*(it - 1);
  }

  /// Appends [left + version] (version null: NULLs) with `kind` to `out` when it qualifies.
  void emit(const TemporalRecord& l, const TemporalRecord* version, RowBatch& out) {
    left_row.clear();
    left_rows.decodeAppend(l.row, left_row, 0);
    left_row.kinds().push_back(RowKind::kInsert);
    bool null_key = false;
    for (int k : spec.left_keys) null_key = null_key || left_row.column(static_cast<size_t>(k)).isNull(0);
    const RowKind kind = static_cast<RowKind>(l.kind);
    const bool live = version != nullptr && !null_key && types::isAccumulate(static_cast<RowKind>(version->kind));
    if (live) {
      pair.clear();
      for (size_t i = 0; i < left_type.size(); ++i) pair.column(i).appendFrom(left_row.column(i), 0);
      right_rows.decodeAppend(version->row, pair, left_type.size());
      pair.kinds().push_back(kind);
      bool ok = true;
      if (condition) {
        condition->evaluateFilter(pair, selected, &scratch);
        ok = !selected.empty();
      }
      if (ok) {
        out.appendRow(pair, 0, kind);
        return;
      }
    }
    if (spec.type != FlinkJoinType::kLeft) return;
    for (size_t i = 0; i < left_type.size(); ++i) out.column(i).appendFrom(left_row.column(i), 0);
    for (size_t i = 0; i < right_type.size(); ++i) out.column(left_type.size() + i).appendNull();
    out.kinds().push_back(kind);
  }

  /// Flink's onEventTime / emitResultAndCleanUpState for the backend's current key.
  void onTimer(RowBatch& out) {
    timer->clear();
    const int64_t watermark = timers->currentWatermark();
    Records* lefts = left->value();
    Records* versions = right->value();
    static const Records kNone;
    const Records& vs = versions ? *versions : kNone;
    int64_t last_unprocessed = INT64_MAX;
    if (lefts != nullptr) {
      Records keep;
      for (const TemporalRecord& l : *lefts) {
        if (l.time <= watermark) {
          emit(l, versionAt(vs, l.time), out);
        } else {
          last_unprocessed = std::min(last_unprocessed, l.time);
          keep.push_back(l);
        }
      }
      if (keep.empty()) left->clear();
      else *left->value() = std::move(keep);
    }
    if (versions != nullptr) {
      versions = right->value();  // the left state's write may have moved the right one (RocksDB cache)
      // Flink's firstIndexToKeep: the version valid at the watermark and every newer one.
      auto newer = std::upper_bound(versions->begin(), versions->end(), watermark,
                                    [](int64_t v, const TemporalRecord& r) { return v < r.time; });
      const long keep_from = newer == versions->end() ? static_cast<long>(versions->size()) - 1
                                                      : static_cast<long>(newer - versions->begin()) - 1;
      if (keep_from > 0) versions->erase(versions->begin(), versions->begin() + keep_from);
    }
    if (last_unprocessed < INT64_MAX) {
      timer->update(last_unprocessed);
      timers->registerEventTimeTimer({}, last_unprocessed);
    }
  }

  RowType left_type, right_type;
  TemporalJoinSpec spec;
  RowType output_type;
  agg::KeyCodec left_keys, right_keys, left_rows, right_rows;
  RowBatch left_row, pair;
  std::optional<ExprEvaluator> condition;
  EvalScratch scratch;
  std::vector<uint32_t> selected;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  RecordsState* left = nullptr;
  RecordsState* right = nullptr;
  LongState* timer = nullptr;
  runtime::state::InternalTimerService* timers = nullptr;
  std::vector<uint64_t> hashes;
  std::string key_buf, row_buf;
};

TemporalRowTimeJoinOperator::TemporalRowTimeJoinOperator(RowType left_type, RowType right_type, TemporalJoinSpec spec) {
  checkSpec(left_type, right_type, spec);
  impl_ = std::make_unique<Impl>(left_type, right_type, std::move(spec));
}

TemporalRowTimeJoinOperator::~TemporalRowTimeJoinOperator() = default;

size_t TemporalRowTimeJoinOperator::numLeftRows() const {
  size_t n = 0;
  if (impl_->left) impl_->left->forEachKey([&](std::string_view, int32_t, std::string_view, Records& r) { n += r.size(); });
  return n;
}

size_t TemporalRowTimeJoinOperator::numVersions() const {
  size_t n = 0;
  if (impl_->right) impl_->right->forEachKey([&](std::string_view, int32_t, std::string_view, Records& r) { n += r.size(); });
  return n;
}

void TemporalRowTimeJoinOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  namespace st = runtime::state;
  s.left = &s.backend->getValueState(st::ValueStateDescriptor<Records>{kLeftState});
  s.right = &s.backend->getValueState(st::ValueStateDescriptor<Records>{kRightState});
  s.timer = &s.backend->getValueState(st::ValueStateDescriptor<int64_t>{kTimerState});
  s.timers = &s.backend->getInternalTimerService(kTimerService);
  if (!sc.isRestored()) return;
  auto check = [&](RecordsState* state, const char* name, const agg::KeyCodec& keys, const agg::KeyCodec& rows,
                   size_t width) {
    state->forEachKey([&](std::string_view key, int32_t group, std::string_view, Records& records) {
      bool ok = keys.isValid(key);
      for (const TemporalRecord& r : records)
        ok = ok && rows.isValid(r.row) && r.kind >= 0 && r.kind <= static_cast<int32_t>(RowKind::kDelete);
      if (!ok)
        internal::rethrowRestoreError(sc, name, group,
                                      InputError(fmt::format("a row does not decode as {} columns", width)));
    });
  };
  check(s.left, kLeftState, s.left_keys, s.left_rows, s.left_type.size());
  check(s.right, kRightState, s.right_keys, s.right_rows, s.right_type.size());
}

void TemporalRowTimeJoinOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.left != nullptr, "TemporalJoin used before open()");
  runtime::hashKeys(batch, s.left_keys.keyColumns(), s.hashes);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const int64_t t = rowTime(batch, s.spec.left_time, row);
    s.left_keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    s.left_rows.encode(batch, row, s.row_buf);
    s.left->valueOrInsert().push_back({t, static_cast<int32_t>(batch.kind(row)), s.row_buf});
    s.registerSmallestTimer(t);
  }
}

void TemporalRowTimeJoinOperator::processBatch2(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.right != nullptr, "TemporalJoin used before open()");
  runtime::hashKeys(batch, s.right_keys.keyColumns(), s.hashes);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) == RowKind::kUpdateBefore) continue;
    const int64_t t = rowTime(batch, s.spec.right_time, row);
    s.right_keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    s.right_rows.encode(batch, row, s.row_buf);
    Records& versions = s.right->valueOrInsert();
    auto it = std::lower_bound(versions.begin(), versions.end(), t,
                               [](const TemporalRecord& r, int64_t v) { return r.time < v; });
    TemporalRecord rec{t, static_cast<int32_t>(batch.kind(row)), s.row_buf};
    if (it != versions.end() && it->time == t) *it = std::move(rec);
    else versions.insert(it, std::move(rec));
    s.registerSmallestTimer(t);
  }
}

void TemporalRowTimeJoinOperator::processWatermark(runtime::Watermark mark) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "TemporalJoin used before open()");
  RowBatch out(s.output_type);
  s.timers->advanceWatermark(mark.timestamp, [&](std::string_view, int32_t, std::string_view, int64_t) {
    s.onTimer(out);
  });
  if (!out.empty()) output_->collect(std::move(out));
  output_->emitWatermark(mark);
}

namespace {

class TemporalJoinFactory : public runtime::StreamOperatorFactory {
 public:
  TemporalJoinFactory(RowType left, RowType right, TemporalJoinSpec spec, int first_edges)
      : left_(std::move(left)), right_(std::move(right)), spec_(std::move(spec)), first_edges_(first_edges) {}
  std::unique_ptr<runtime::StreamOperator> createOperator() const override {
    return std::make_unique<TemporalRowTimeJoinOperator>(left_, right_, spec_);
  }
  int numFirstInputEdges() const override { return first_edges_; }

 private:
  RowType left_;
  RowType right_;
  TemporalJoinSpec spec_;
  int first_edges_;
};

}  // namespace

std::shared_ptr<const runtime::StreamOperatorFactory> makeTemporalJoinFactory(RowType left_type, RowType right_type,
                                                                              TemporalJoinSpec spec,
                                                                              int num_first_input_edges) {
  TemporalRowTimeJoinOperator probe(left_type, right_type, spec);
  return std::make_shared<TemporalJoinFactory>(std::move(left_type), std::move(right_type), std::move(spec),
                                               num_first_input_edges);
}

}  // namespace sluice::table

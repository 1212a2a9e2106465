#include "table/runtime/window_join.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/network/record_writer.h"
#include "runtime/serialization/type_serializer.h"
#include "runtime/state/internal_timer_service.h"
#include "table/functions/evaluator.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/streaming_join.h"

namespace sluice::table {

/// One side's rows of one key and window, in arrival order (KeyCodec form); `null_key` when the key has a
/// NULL column (such rows match nothing).
struct WindowJoinRows {
  bool null_key = false;
  std::vector<std::string> rows;
};
SLUICE_TYPE(WindowJoinRows, null_key, rows)

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

using RowsState = runtime::state::ValueState<WindowJoinRows>;

constexpr const char* kTimerService = "window-timers";

void encodeWindowEnd(int64_t end, std::string& out) {
  out.resize(8);
  const auto u = static_cast<uint64_t>(end);
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(u >> (56 - 8 * i));
}

std::vector<int> allColumns(const RowType& t) {
  std::vector<int> out;
  for (size_t i = 0; i < t.size(); ++i) out.push_back(static_cast<int>(i));
  return out;
}

struct Side {
  Side(const RowType& type, std::vector<int> join_keys, int end_col, std::string state)
      : keys(type, std::move(join_keys)),
        rows(type, allColumns(type)),
        width(type.size()),
        window_end(end_col),
        name(std::move(state)) {}
  agg::KeyCodec keys;
  agg::KeyCodec rows;
  size_t width;
  int window_end;
  std::string name;
  RowsState* state = nullptr;
};

void checkSpec(const RowType& left, const RowType& right, const JoinSpec& spec, int left_end, int right_end) {
  SLUICE_USER_CHECK(spec.left_keys.size() == spec.right_keys.size(), "join keys: {} left, {} right",
                    spec.left_keys.size(), spec.right_keys.size());
  auto inRange = [](const std::vector<int>& cols, const RowType& t, const char* what) {
    for (int c : cols)
      SLUICE_USER_CHECK(c >= 0 && static_cast<size_t>(c) < t.size(), "{} column {} out of range (row of {})", what, c,
                        t.size());
  };
  inRange(spec.left_keys, left, "left join key");
  inRange(spec.right_keys, right, "right join key");
  auto endColumn = [](int c, const RowType& t, const char* what) {
    SLUICE_USER_CHECK(c >= 0 && static_cast<size_t>(c) < t.size(), "{} window_end column {} out of range (row of {})",
                      what, c, t.size());
    const auto id = t.types[static_cast<size_t>(c)].id;
    SLUICE_USER_CHECK(id == types::TypeId::kTimestamp || id == types::TypeId::kBigInt,
                      "{} window_end column {} must be a TIMESTAMP, but is {}", what, c,
                      t.types[static_cast<size_t>(c)].toString());
  };
  endColumn(left_end, left, "left");
  endColumn(right_end, right, "right");
  if (spec.non_equi_condition)
    SLUICE_USER_CHECK(spec.non_equi_condition->type.id == types::TypeId::kBoolean,
                      "join condition must be BOOLEAN, is {}", spec.non_equi_condition->type.toString());
}

}  // namespace

struct WindowJoinOperator::Impl {
  Impl(const RowType& left_type, const RowType& right_type, JoinSpec s, int left_end, int right_end)
      : spec(std::move(s)),
        left(left_type, spec.left_keys, left_end, "left-records"),
        right(right_type, spec.right_keys, right_end, "right-records"),
        output_type(StreamingJoinOperator::outputType(left_type, right_type, spec.type)) {
    for (const auto& t : left_type.types) pair_type.types.push_back(t);
    for (const auto& t : right_type.types) pair_type.types.push_back(t);
    pair_type.names.assign(pair_type.types.size(), "");
    if (spec.non_equi_condition) condition.emplace(spec.non_equi_condition);
  }

  /// Joins the current key's rows of the window `ns` and clears them.
  void fire(std::string_view ns, RowBatch& out);
  void appendPadded(const Side& self, const std::string& bytes, RowBatch& out) const;

  JoinSpec spec;
  Side left;
  Side right;
  RowType output_type;
  RowType pair_type;
  std::optional<ExprEvaluator> condition;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  runtime::state::InternalTimerService* timers = nullptr;
  runtime::state::PartitionableListState<int64_t>* watermark_state = nullptr;
  int64_t watermark = std::numeric_limits<int64_t>::min();
  std::vector<uint64_t> hashes;
  std::string key_buf, row_buf, ns_buf;
  std::vector<uint32_t> selected;
  EvalScratch scratch;
};

WindowJoinOperator::WindowJoinOperator(RowType left_type, RowType right_type, JoinSpec spec, int left_window_end,
                                       int right_window_end, const std::string& time_zone)
    : shift_(time_zone) {
  checkSpec(left_type, right_type, spec, left_window_end, right_window_end);
  impl_ = std::make_unique<Impl>(left_type, right_type, std::move(spec), left_window_end, right_window_end);
}

WindowJoinOperator::~WindowJoinOperator() = default;

size_t WindowJoinOperator::numBufferedRows(bool left) const {
  const Side& s = left ? impl_->left : impl_->right;
  if (s.state == nullptr) return 0;
  size_t n = 0;
  s.state->forEachKey([&](std::string_view, int32_t, std::string_view, WindowJoinRows& r) { n += r.rows.size(); });
  return n;
}

void WindowJoinOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  namespace st = runtime::state;
  for (Side* side : {&s.left, &s.right}) {
    side->state = &s.backend->getValueState(st::ValueStateDescriptor<WindowJoinRows>{side->name});
    if (!sc.isRestored()) continue;
    side->state->forEachKey([&](std::string_view key, int32_t key_group, std::string_view ns, WindowJoinRows& r) {
      bool ok = side->keys.isValid(key) && ns.size() == 8;
      for (const std::string& row : r.rows) ok = ok && side->rows.isValid(row);
      if (!ok)
        internal::rethrowRestoreError(sc, side->name, key_group,
                                      InputError(fmt::format("a row does not decode as {} columns", side->width)));
    });
  }
  s.timers = &s.backend->getInternalTimerService(kTimerService);
  s.watermark_state = &sc.operatorStateBackend().getUnionListState(st::ListStateDescriptor<int64_t>{"watermark"});
  if (sc.isRestored()) {
    const std::vector<int64_t>& marks = s.watermark_state->get();
    if (!marks.empty()) s.watermark = *std::min_element(marks.begin(), marks.end());
  }
}

void WindowJoinOperator::processBatch(RowBatch&& batch) { processInput(batch, true); }
void WindowJoinOperator::processBatch2(RowBatch&& batch) { processInput(batch, false); }

void WindowJoinOperator::processInput(const RowBatch& batch, bool input_is_left) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "WindowJoin used before open()");
  Side& self = input_is_left ? s.left : s.right;
  const types::Column& end_col = batch.column(static_cast<size_t>(self.window_end));
  runtime::hashKeys(batch, self.keys.keyColumns(), s.hashes);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != RowKind::kInsert)
      throw UserError(fmt::format("WindowJoin doesn't support consuming update and delete changes: the {} input "
                                  "sent {}",
                                  input_is_left ? "left" : "right", types::shortString(batch.kind(row))));
    SLUICE_CHECK(!end_col.isNull(row), "WindowJoin: NULL window_end");
    const int64_t end = end_col.getLong(row);
    if (shift_.isWindowFired(end, s.watermark)) {  // the window has been joined already
      ++num_late_records_dropped_;
      if (ctx_.metrics != nullptr) ctx_.metrics->num_late_records_dropped.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    self.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    encodeWindowEnd(end, s.ns_buf);
    self.state->setCurrentNamespace(s.ns_buf);
    bool inserted = false;
    WindowJoinRows& rows = self.state->valueOrInsertWith([] { return WindowJoinRows{}; }, inserted);
    if (inserted) {
      for (int k : self.keys.keyColumns()) rows.null_key = rows.null_key || batch.column(static_cast<size_t>(k)).isNull(row);
    }
    self.rows.encode(batch, row, s.row_buf);
    rows.rows.push_back(s.row_buf);
    s.timers->registerEventTimeTimer(s.ns_buf, shift_.toEpochMillsForTimer(end - 1));
  }
}

void WindowJoinOperator::Impl::appendPadded(const Side& self, const std::string& bytes, RowBatch& out) const {
  const bool is_left = &self == &left;
  const Side& other = is_left ? right : left;
  const size_t self_first = is_left ? 0 : left.width;
  const size_t other_first = is_left ? left.width : 0;
  self.rows.decodeAppend(bytes, out, self_first);
  if (!spec.isSemiOrAnti())
    for (size_t i = 0; i < other.width; ++i) out.column(other_first + i).appendNull();
  out.kinds().push_back(RowKind::kInsert);
}

void WindowJoinOperator::Impl::fire(std::string_view ns, RowBatch& out) {
  WindowJoinRows l, r;
  left.state->setCurrentNamespace(ns);
  if (WindowJoinRows* v = left.state->value()) {
    l = std::move(*v);
    left.state->clear();
  }
  right.state->setCurrentNamespace(ns);
  if (WindowJoinRows* v = right.state->value()) {
    r = std::move(*v);
    right.state->clear();
  }
  std::vector<bool> right_matched(r.rows.size(), false);
  const bool can_match = !l.null_key && !r.null_key && !l.rows.empty() && !r.rows.empty();
  for (const std::string& lrow : l.rows) {
    // The right rows this left row joins: all of them, or those the condition accepts.
    selected.clear();
    if (can_match) {
      if (condition) {
        RowBatch pairs(pair_type);
        for (const std::string& rrow : r.rows) {
          left.rows.decodeAppend(lrow, pairs, 0);
          right.rows.decodeAppend(rrow, pairs, left.width);
          pairs.kinds().push_back(RowKind::kInsert);
        }
        condition->evaluateFilter(pairs, selected, &scratch);
      } else {
        for (size_t i = 0; i < r.rows.size(); ++i) selected.push_back(static_cast<uint32_t>(i));
      }
    }
    if (spec.type == FlinkJoinType::kSemi || spec.type == FlinkJoinType::kAnti) {
      if (selected.empty() == (spec.type == FlinkJoinType::kAnti)) appendPadded(left, lrow, out);
      continue;
    }
    for (uint32_t i : selected) {
      left.rows.decodeAppend(lrow, out, 0);
      right.rows.decodeAppend(r.rows[i], out, left.width);
      out.kinds().push_back(RowKind::kInsert);
      right_matched[i] = true;
    }
    if (selected.empty() && spec.leftIsOuter()) appendPadded(left, lrow, out);
  }
  if (spec.rightIsOuter())
    for (size_t i = 0; i < r.rows.size(); ++i)
      if (!right_matched[i]) appendPadded(right, r.rows[i], out);
}

void WindowJoinOperator::processWatermark(runtime::Watermark mark) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "WindowJoin used before open()");
  RowBatch out(s.output_type);
  s.watermark = std::max(s.watermark, mark.timestamp);
  s.timers->advanceWatermark(mark.timestamp,
                             [&](std::string_view, int32_t, std::string_view ns, int64_t) { s.fire(ns, out); });
  if (!out.empty()) output_->collect(std::move(out));
  output_->emitWatermark(mark);
}

void WindowJoinOperator::snapshotState(int64_t checkpoint_id) {
  (void)checkpoint_id;
  SLUICE_CHECK(impl_->watermark_state != nullptr, "WindowJoin snapshot before open()");
  impl_->watermark_state->update({impl_->watermark});
}

namespace {

class WindowJoinFactory : public runtime::StreamOperatorFactory {
 public:
  WindowJoinFactory(RowType left, RowType right, JoinSpec spec, int left_end, int right_end, int first_edges,
                    std::string time_zone)
      : left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)),
        left_end_(left_end),
        right_end_(right_end),
        first_edges_(first_edges),
        time_zone_(std::move(time_zone)) {}
  std::unique_ptr<runtime::StreamOperator> createOperator() const override {
    return std::make_unique<WindowJoinOperator>(left_, right_, spec_, left_end_, right_end_, time_zone_);
  }
  int numFirstInputEdges() const override { return first_edges_; }

 private:
  RowType left_;
  RowType right_;
  JoinSpec spec_;
  int left_end_;
  int right_end_;
  int first_edges_;
  std::string time_zone_;
};

}  // namespace

std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowJoinFactory(RowType left_type, RowType right_type,
                                                                            JoinSpec spec, int left_window_end,
                                                                            int right_window_end,
                                                                            int num_first_input_edges,
                                                                            const std::string& time_zone) {
  WindowJoinOperator probe(left_type, right_type, spec, left_window_end, right_window_end, time_zone);
  return std::make_shared<WindowJoinFactory>(std::move(left_type), std::move(right_type), std::move(spec),
                                             left_window_end, right_window_end, num_first_input_edges, time_zone);
}

}  // namespace sluice::table

// User-defined aggregate functions in the aggregation operators' keyed state, on the hashmap and the
// RocksDB backend: a snapshot at every input boundary restores into a fresh operator that continues the
// changelog (GROUP BY over an updating input, so the restored accumulators are retracted from) or the
// window results (TUMBLE) exactly; a snapshot of another function's accumulators is refused at restore.
// Expected output worked out by hand.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/error.h"
#include "state_test_util.h"
#include "table/functions/aggregate_function.h"
#include "table/runtime/group_aggregate.h"
#include "table/runtime/window_aggregate.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAreArray;
using testing::CollectingOutput;
using testing::del;
using testing::InputRow;
using testing::ins;
using testing::kNull;
using testing::makeBatch;
using testing::ua;
using testing::ub;
using types::LogicalType;
using types::RowType;

// sumsq(v BIGINT) = SUM(v * v), with retract.
std::shared_ptr<const AggregateFunction> sumOfSquares() {
  return makeAggregateFunction<int64_t>([](int64_t& a, int64_t v) { a += v * v; },
                                        [](const int64_t& a) { return a; },
                                        [](int64_t& a, int64_t v) { a -= v * v; });
}

// collect(s STRING): the values sorted and joined by '|', with retract (one occurrence).
std::shared_ptr<const AggregateFunction> collect() {
  using Values = std::vector<std::string>;
  return makeAggregateFunction<Values>(
      [](Values& a, std::string_view s) { a.emplace_back(s); },
      [](const Values& a) {
        Values sorted = a;
        std::sort(sorted.begin(), sorted.end());
        std::string out;
        for (size_t i = 0; i < sorted.size(); ++i) out += (i ? "|" : "") + sorted[i];
        return out;
      },
      [](Values& a, std::string_view s) {
        auto it = std::find(a.begin(), a.end(), s);
        if (it != a.end()) a.erase(it);
      });
}

AggregateCall userCall(std::shared_ptr<const AggregateFunction> f, const std::string& name, std::vector<int> args) {
  AggregateCall c;
  c.kind = AggKind::kUser;
  c.function = std::move(f);
  c.function_name = name;
  c.user_args = std::move(args);
  c.name = name;
  return c;
}

class UserAggregateStateTest : public ::testing::TestWithParam<runtime::state::StateBackendType> {
 protected:
  std::unique_ptr<runtime::state::StreamOperatorStateContext> context(
      const runtime::checkpoint::OperatorSubtaskState* restored) const {
    return testing::makeStateContext(restored, GetParam(), "UserAggregateStateTest");
  }
};

// GROUP BY k: k STRING, v BIGINT, s STRING.
RowType groupInput() {
  return RowType{{"k", "v", "s"}, {LogicalType::string(), LogicalType::bigint(), LogicalType::string()}};
}

std::vector<AggregateCall> groupCalls() {
  return {userCall(sumOfSquares(), "sumsq(v)", {1}), userCall(collect(), "collect(s)", {2})};
}

const std::vector<InputRow> kGroupRows = {
    ins({"a", int64_t{2}, "x"}), ins({"b", int64_t{3}, "y"}), ins({"a", int64_t{1}, "z"}),
    del({"a", int64_t{2}, "x"}), ub({"b", int64_t{3}, "y"}),  ua({"b", int64_t{4}, "w"}),
    ins({"a", kNull, "y"}),
};

// Columns k, sumsq(v), collect(s).
const std::vector<std::string> kGroupExpected = {
    "+I[a, 4, x]",                    // a {2 x}
    "+I[b, 9, y]",                    // b {3 y}
    "-U[a, 4, x]", "+U[a, 5, x|z]",   // a {2 x, 1 z}: 4 + 1
    "-U[a, 5, x|z]", "+U[a, 1, z]",   // 2 x retracted
    "-D[b, 9, y]",                    // b's only row retracted
    "+I[b, 16, w]",                   // b starts over
    "-U[a, 1, z]", "+U[a, 1, y|z]",   // NULL v: sumsq skips the row, collect takes y
};

TEST_P(UserAggregateStateTest, GroupAggregateRestoresAtEveryRowBoundary) {
  for (size_t split = 0; split <= kGroupRows.size(); ++split) {
    SCOPED_TRACE("split after row " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = context(nullptr);
    auto first = std::make_unique<GroupAggregateOperator>(groupInput(), std::vector<int>{0}, groupCalls());
    testing::openWithState(*first, out, metrics, *state1);
    for (size_t i = 0; i < split; ++i) first->processBatch(makeBatch(groupInput(), {kGroupRows[i]}));
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    // The failed task's operator and backends are gone; only the snapshot survives.
    first.reset();
    state1.reset();
    auto state2 = context(&snap);
    GroupAggregateOperator second(groupInput(), {0}, groupCalls());
    testing::openWithState(second, out, metrics, *state2);
    for (size_t i = split; i < kGroupRows.size(); ++i) second.processBatch(makeBatch(groupInput(), {kGroupRows[i]}));
    EXPECT_THAT(out.take(), ElementsAreArray(kGroupExpected));
  }
}

TEST_P(UserAggregateStateTest, AccumulatorsOfAnotherFunctionAreRefusedAtRestore) {
  CollectingOutput out;
  runtime::OperatorMetrics metrics;
  auto state1 = context(nullptr);
  GroupAggregateOperator first(groupInput(), {0}, {userCall(collect(), "collect(s)", {2})});
  testing::openWithState(first, out, metrics, *state1);
  first.processBatch(makeBatch(groupInput(), {ins({"a", int64_t{2}, "x"})}));
  const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(first, *state1);
  // sumsq reads 8 bytes of int64; collect wrote a vector of one string (3 bytes).
  auto state2 = context(&snap);
  GroupAggregateOperator second(groupInput(), {0}, {userCall(sumOfSquares(), "sumsq(v)", {1})});
  try {
    testing::openWithState(second, out, metrics, *state2);
    FAIL() << "restored another function's accumulator";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("restored state 'accState'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sumsq(v)"), std::string::npos) << e.what();
  }
}

// TUMBLE(10 ms) by k: k STRING, ts TIMESTAMP(3), v BIGINT.
RowType windowInput() {
  return RowType{{"k", "ts", "v"}, {LogicalType::string(), LogicalType::timestamp(3), LogicalType::bigint()}};
}

using Event = std::variant<InputRow, int64_t>;  // a row or a watermark

TEST_P(UserAggregateStateTest, TumbleRestoresAtEveryEventBoundary) {
  WindowSpec w;
  w.kind = WindowSpec::Kind::kTumble;
  w.time_index = 1;
  w.size_ms = w.slide_ms = 10;
  const std::vector<AggregateCall> calls = {userCall(sumOfSquares(), "sumsq(v)", {2})};
  const std::vector<Event> events = {
      ins({"b", int64_t{3}, int64_t{1}}),  ins({"a", int64_t{5}, int64_t{2}}), ins({"b", int64_t{12}, int64_t{4}}),
      int64_t{9},                          ins({"c", int64_t{15}, int64_t{5}}), ins({"b", int64_t{17}, int64_t{6}}),
      int64_t{25},                         int64_t{100},
  };
  // Columns k, sumsq(v), window_start, window_end. WM 9 fires [0, 10): b 1*1, then a 2*2 (arrival order);
  // WM 25 fires [10, 20): b 4*4 + 6*6 = 52, then c 5*5.
  const std::vector<std::string> expected = {"+I[b, 1, 0, 10]",   "+I[a, 4, 0, 10]",   "WM(9)",  "+I[b, 52, 10, 20]",
                                             "+I[c, 25, 10, 20]", "WM(25)", "WM(100)"};
  auto feed = [&](WindowAggregateOperator& op, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      if (const auto* row = std::get_if<InputRow>(&events[i])) op.processBatch(makeBatch(windowInput(), {*row}));
      else op.processWatermark(runtime::Watermark{std::get<int64_t>(events[i])});
    }
  };
  for (size_t split = 0; split <= events.size(); ++split) {
    SCOPED_TRACE("split after event " + std::to_string(split));
    CollectingOutput out;
    runtime::OperatorMetrics metrics;
    auto state1 = context(nullptr);
    auto first = std::make_unique<WindowAggregateOperator>(windowInput(), w, std::vector<int>{0}, calls);
    testing::openWithState(*first, out, metrics, *state1);
    feed(*first, 0, split);
    const runtime::checkpoint::OperatorSubtaskState snap = testing::takeSnapshot(*first, *state1);
    first.reset();
    state1.reset();
    auto state2 = context(&snap);
    WindowAggregateOperator second(windowInput(), w, {0}, calls);
    testing::openWithState(second, out, metrics, *state2);
    feed(second, split, events.size());
    EXPECT_THAT(out.take(), ElementsAreArray(expected));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, UserAggregateStateTest,
                         ::testing::Values(runtime::state::StateBackendType::kHashMap,
                                           runtime::state::StateBackendType::kRocksDB),
                         [](const auto& info) {
                           return std::string(info.param == runtime::state::StateBackendType::kRocksDB ? "RocksDB"
                                                                                                       : "HashMap");
                         });

}  // namespace
}  // namespace sluice::table

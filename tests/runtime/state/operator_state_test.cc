#include "runtime/state/operator_state_backend.h"

#include <gtest/gtest.h>

#include "runtime/state/state_redistribution.h"

namespace sluice::runtime::state {
namespace {

using checkpoint::OperatorListState;
using checkpoint::OperatorStateMode;
using checkpoint::OperatorSubtaskState;
using Lists = std::map<std::string, std::vector<std::string>>;

OperatorListState list(OperatorStateMode mode, std::vector<std::string> elements) {
  return OperatorListState{mode, std::move(elements)};
}

Lists elementsOf(const std::map<std::string, OperatorListState>& m) {
  Lists out;
  for (const auto& [name, l] : m) out[name] = l.elements;
  return out;
}

constexpr auto kSplit = OperatorStateMode::kSplitDistribute;
constexpr auto kUnion = OperatorStateMode::kUnion;

// Two old subtasks: split "a" = [a0 a1 a2] + [a3 a4], split "b" = [b0] + [b1 b2 b3], union "u" = [u0] + [u1].
std::vector<OperatorSubtaskState> twoOldSubtasks() {
  std::vector<OperatorSubtaskState> old(2);
  old[0].operator_state["a"] = list(kSplit, {"a0", "a1", "a2"});
  old[1].operator_state["a"] = list(kSplit, {"a3", "a4"});
  old[0].operator_state["b"] = list(kSplit, {"b0"});
  old[1].operator_state["b"] = list(kSplit, {"b1", "b2", "b3"});
  old[0].operator_state["u"] = list(kUnion, {"u0"});
  old[1].operator_state["u"] = list(kUnion, {"u1"});
  return old;
}

TEST(OperatorStateTest, RedistributeTwoIntoOne) {
  auto old = twoOldSubtasks();
  auto out = redistributeOperatorState({&old[0], &old[1]}, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(elementsOf(out[0]),
            (Lists{{"a", {"a0", "a1", "a2", "a3", "a4"}}, {"b", {"b0", "b1", "b2", "b3"}}, {"u", {"u0", "u1"}}}));
  EXPECT_EQ(out[0].at("u").mode, kUnion);
  EXPECT_EQ(out[0].at("a").mode, kSplit);
}

TEST(OperatorStateTest, RedistributeTwoIntoThree) {
  auto old = twoOldSubtasks();
  auto out = redistributeOperatorState({&old[0], &old[1]}, 3);
  ASSERT_EQ(out.size(), 3u);
  // "a": 5 elements over 3 = chunks 2, 2, 1 to subtasks 0, 1, 2; subtask 2 got the first small chunk, so
  // "b" starts there: 4 over 3 = chunks 2, 1, 1 to subtasks 2, 0, 1.
  EXPECT_EQ(elementsOf(out[0]), (Lists{{"a", {"a0", "a1"}}, {"b", {"b2"}}, {"u", {"u0", "u1"}}}));
  EXPECT_EQ(elementsOf(out[1]), (Lists{{"a", {"a2", "a3"}}, {"b", {"b3"}}, {"u", {"u0", "u1"}}}));
  EXPECT_EQ(elementsOf(out[2]), (Lists{{"a", {"a4"}}, {"b", {"b0", "b1"}}, {"u", {"u0", "u1"}}}));
}

TEST(OperatorStateTest, SameParallelismKeepsSplitListsAndUnitesUnionLists) {
  auto old = twoOldSubtasks();
  auto out = redistributeOperatorState({&old[0], &old[1]}, 2);
  EXPECT_EQ(elementsOf(out[0]), (Lists{{"a", {"a0", "a1", "a2"}}, {"b", {"b0"}}, {"u", {"u0", "u1"}}}));
  EXPECT_EQ(elementsOf(out[1]), (Lists{{"a", {"a3", "a4"}}, {"b", {"b1", "b2", "b3"}}, {"u", {"u0", "u1"}}}));
}

TEST(OperatorStateTest, FewElementsLeaveSomeSubtasksWithout) {
  OperatorSubtaskState one;
  one.operator_state["s"] = list(kSplit, {"x"});
  auto out = redistributeOperatorState({&one, nullptr}, 3);
  EXPECT_EQ(elementsOf(out[0]), (Lists{{"s", {"x"}}}));
  EXPECT_TRUE(out[1].empty());
  EXPECT_TRUE(out[2].empty());
}

TEST(OperatorStateTest, BroadcastAndModeConflicts) {
  std::vector<OperatorSubtaskState> old(2);
  old[0].operator_state["bc"] = list(OperatorStateMode::kBroadcast, {"c"});
  old[1].operator_state["bc"] = list(OperatorStateMode::kBroadcast, {"c"});
  auto out = redistributeOperatorState({&old[0], &old[1]}, 3);
  for (const auto& s : out) EXPECT_EQ(elementsOf(s), (Lists{{"bc", {"c"}}}));
  old[1].operator_state["bc"].mode = kUnion;
  EXPECT_THROW(redistributeOperatorState({&old[0], &old[1]}, 3), InputError);
}

TEST(OperatorStateTest, BackendRoundTripAndRestoreFromRedistribution) {
  OperatorStateBackend b0, b1;
  auto& offsets0 = b0.getListState(ListStateDescriptor<int64_t>{"offsets"});
  EXPECT_EQ(&offsets0, &b0.getListState(ListStateDescriptor<int64_t>{"offsets"}));
  offsets0.add(10);
  offsets0.add(11);
  offsets0.add(12);
  b1.getListState(ListStateDescriptor<int64_t>{"offsets"}).add(20);
  b0.getUnionListState(ListStateDescriptor<std::string>{"ids"}).add("zero");
  b1.getUnionListState(ListStateDescriptor<std::string>{"ids"}).add("one");
  EXPECT_THROW(b0.getUnionListState(ListStateDescriptor<int64_t>{"offsets"}), UserError);
  EXPECT_THROW(b0.getListState(ListStateDescriptor<int32_t>{"offsets"}), UserError);

  OperatorSubtaskState s0, s1;
  s0.operator_state = b0.snapshot();
  s1.operator_state = b1.snapshot();
  auto out = redistributeOperatorState({&s0, &s1}, 3);
  // offsets [10 11 12 20]: chunks 2, 1, 1.
  std::vector<std::vector<int64_t>> expected_offsets = {{10, 11}, {12}, {20}};
  for (int i = 0; i < 3; ++i) {
    OperatorStateBackend r(out[i]);
    EXPECT_EQ(r.getListState(ListStateDescriptor<int64_t>{"offsets"}).get(), expected_offsets[i]);
    EXPECT_EQ(r.getUnionListState(ListStateDescriptor<std::string>{"ids"}).get(),
              (std::vector<std::string>{"zero", "one"}));
  }
  // Registered with another mode than restored: UserError; elements that do not decode: InputError.
  OperatorStateBackend wrong_mode(out[0]);
  EXPECT_THROW(wrong_mode.getUnionListState(ListStateDescriptor<int64_t>{"offsets"}), UserError);
  std::map<std::string, OperatorListState> bad = {{"offsets", list(kSplit, {"abc"})}};
  OperatorStateBackend bad_backend(bad);
  try {
    bad_backend.getListState(ListStateDescriptor<int64_t>{"offsets"});
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'offsets', element 0"), std::string::npos) << e.what();
  }
  // Unregistered restored lists pass through a snapshot unchanged.
  OperatorStateBackend untouched(out[1]);
  EXPECT_EQ(elementsOf(untouched.snapshot()), elementsOf(out[1]));
}

}  // namespace
}  // namespace sluice::runtime::state

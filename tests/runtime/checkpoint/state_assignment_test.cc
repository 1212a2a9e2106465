#include "runtime/checkpoint/state_assignment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "checkpoint_fixtures.h"

namespace sluice::runtime::checkpoint {
namespace {

using ::testing::HasSubstr;
using testing::twoOperatorCheckpoint;

using Keyed = std::map<int32_t, std::string>;
using Elements = std::vector<std::string>;

std::vector<int32_t> groupsOf(const OperatorSubtaskState& s) {
  std::vector<int32_t> groups;
  for (const auto& [g, blob] : s.keyed) groups.push_back(g);
  return groups;
}

TEST(StateAssignmentTest, ScaleInTwoToOneGetsEverything) {
  const StateAssignment a =
      assignStates(twoOperatorCheckpoint(1), {{"agg", {1, 128}}, {"src", {1, 128}}}, false);
  ASSERT_EQ(a.at("agg").size(), 1u);
  // p = 1 owns [0, 127]: all eight groups of both old subtasks.
  EXPECT_EQ(a.at("agg")[0].keyed, (Keyed{{0, "k0"}, {31, "k31"}, {32, "k32"}, {63, "k63"}, {64, "k64"},
                                         {95, "k95"}, {96, "k96"}, {127, std::string("k\0" "127", 5)}}));
  EXPECT_TRUE(a.at("agg")[0].operator_state.empty());
  const auto& src = a.at("src")[0].operator_state;
  EXPECT_EQ(src.at("offsets").elements, (Elements{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(src.at("offsets").mode, OperatorStateMode::kSplitDistribute);
  EXPECT_EQ(src.at("splits").elements, (Elements{"x", "y"}));
  EXPECT_EQ(src.at("splits").mode, OperatorStateMode::kUnion);
}

TEST(StateAssignmentTest, ScaleOutTwoToFourFollowsKeyGroupRanges) {
  const StateAssignment a =
      assignStates(twoOperatorCheckpoint(1), {{"agg", {4, 128}}, {"src", {4, 128}}}, false);
  const auto& agg = a.at("agg");
  ASSERT_EQ(agg.size(), 4u);
  // maxP 128, p 4: [0,31], [32,63], [64,95], [96,127].
  EXPECT_EQ(groupsOf(agg[0]), (std::vector<int32_t>{0, 31}));
  EXPECT_EQ(groupsOf(agg[1]), (std::vector<int32_t>{32, 63}));
  EXPECT_EQ(groupsOf(agg[2]), (std::vector<int32_t>{64, 95}));
  EXPECT_EQ(groupsOf(agg[3]), (std::vector<int32_t>{96, 127}));
  EXPECT_EQ(agg[2].keyed.at(95), "k95");

  // Split: 5 elements over 4 subtasks, 5/4 = 1 each and the first 5%4 = 1 one more.
  const auto& src = a.at("src");
  ASSERT_EQ(src.size(), 4u);
  EXPECT_EQ(src[0].operator_state.at("offsets").elements, (Elements{"a", "b"}));
  EXPECT_EQ(src[1].operator_state.at("offsets").elements, (Elements{"c"}));
  EXPECT_EQ(src[2].operator_state.at("offsets").elements, (Elements{"d"}));
  EXPECT_EQ(src[3].operator_state.at("offsets").elements, (Elements{"e"}));
  for (const OperatorSubtaskState& s : src) {
    EXPECT_EQ(s.operator_state.at("splits").elements, (Elements{"x", "y"}));
    EXPECT_TRUE(s.keyed.empty());
  }
}

TEST(StateAssignmentTest, ScaleOutTwoToThreeRoundsRangeStartsUp) {
  const StateAssignment a = assignStates(twoOperatorCheckpoint(1), {{"agg", {3, 128}}, {"src", {3, 128}}}, false);
  // maxP 128, p 3: [ceil(0)=0, 127/3=42], [ceil(128/3)=43, 255/3=85], [ceil(256/3)=86, 383/3=127].
  EXPECT_EQ(groupsOf(a.at("agg")[0]), (std::vector<int32_t>{0, 31, 32}));
  EXPECT_EQ(groupsOf(a.at("agg")[1]), (std::vector<int32_t>{63, 64}));
  EXPECT_EQ(groupsOf(a.at("agg")[2]), (std::vector<int32_t>{95, 96, 127}));
  // Split: 5 over 3 -> 2, 2, 1.
  EXPECT_EQ(a.at("src")[0].operator_state.at("offsets").elements, (Elements{"a", "b"}));
  EXPECT_EQ(a.at("src")[1].operator_state.at("offsets").elements, (Elements{"c", "d"}));
  EXPECT_EQ(a.at("src")[2].operator_state.at("offsets").elements, (Elements{"e"}));
}

TEST(StateAssignmentTest, UnchangedParallelismKeepsEachSubtasksSplitState) {
  // Old subtask 0 holds a, b, c and subtask 1 d, e: at p 2 again nothing moves (an even cut would give
  // subtask 0 a, b, c as well, but subtask 1 too only d, e; the next case tells them apart).
  const StateAssignment a = assignStates(twoOperatorCheckpoint(1), {{"agg", {2, 128}}, {"src", {2, 128}}}, false);
  EXPECT_EQ(a.at("src")[0].operator_state.at("offsets").elements, (Elements{"a", "b", "c"}));
  EXPECT_EQ(a.at("src")[1].operator_state.at("offsets").elements, (Elements{"d", "e"}));
  EXPECT_EQ(a.at("src")[1].operator_state.at("splits").elements, (Elements{"x", "y"}));

  // A source subtask that had not asked for its split yet (nothing) next to one reading its split: the
  // split goes back to subtask 1, not to subtask 0, where it would be read before subtask 0's own data.
  std::vector<OperatorSubtaskState> old(2);
  old[0].operator_state["SourceReaderState"] = testing::listState(OperatorStateMode::kSplitDistribute, {});
  old[1].operator_state["SourceReaderState"] = testing::listState(OperatorStateMode::kSplitDistribute, {"s1@40"});
  const auto lists = redistributeOperatorListStates("src", old, 2);
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0].at("SourceReaderState").elements, Elements{});
  EXPECT_EQ(lists[1].at("SourceReaderState").elements, (Elements{"s1@40"}));
  EXPECT_EQ(lists[0].at("SourceReaderState").mode, OperatorStateMode::kSplitDistribute);

  // A state name only one old subtask holds appears in every new subtask, empty where it had none.
  old[0].operator_state.clear();
  const auto partial = redistributeOperatorListStates("src", old, 2);
  EXPECT_EQ(partial[0].at("SourceReaderState").elements, Elements{});
  EXPECT_EQ(partial[1].at("SourceReaderState").elements, (Elements{"s1@40"}));
}

TEST(StateAssignmentTest, BroadcastStateIsTheFirstSubtasksCopy) {
  OperatorState op;
  op.parallelism = 2;
  op.max_parallelism = 128;
  op.subtasks.resize(2);
  op.subtasks[0].operator_state["rules"] = testing::listState(OperatorStateMode::kBroadcast, {"r1", "r2"});
  op.subtasks[1].operator_state["rules"] = testing::listState(OperatorStateMode::kBroadcast, {"r1", "r2"});
  const std::vector<std::map<std::string, OperatorListState>> lists =
      redistributeOperatorListStates("bc", op.subtasks, 3);
  ASSERT_EQ(lists.size(), 3u);
  for (const auto& l : lists) EXPECT_EQ(l.at("rules").elements, (Elements{"r1", "r2"}));

  op.subtasks[1].operator_state["rules"].mode = OperatorStateMode::kUnion;
  try {
    redistributeOperatorListStates("bc", op.subtasks, 3);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("operator 'bc': operator state 'rules' has mode 2"));
  }
}

TEST(StateAssignmentTest, NewStatelessOperatorGetsEmptyStates) {
  const StateAssignment a = assignStates(twoOperatorCheckpoint(1),
                                         {{"agg", {2, 128}}, {"src", {2, 128}}, {"new-map", {3, 128}}}, false);
  ASSERT_EQ(a.at("new-map").size(), 3u);
  for (const OperatorSubtaskState& s : a.at("new-map")) EXPECT_TRUE(s.empty());
  // Same parallelism: each subtask gets back exactly its own key groups.
  EXPECT_EQ(groupsOf(a.at("agg")[1]), (std::vector<int32_t>{64, 95, 96, 127}));
}

TEST(StateAssignmentTest, MaxParallelismMismatchNamesTheOperatorAndBothValues) {
  try {
    assignStates(twoOperatorCheckpoint(1), {{"agg", {2, 256}}, {"src", {2, 128}}}, false);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_THAT(m, HasSubstr("operator 'agg'"));
    EXPECT_THAT(m, HasSubstr("max parallelism 128"));
    EXPECT_THAT(m, HasSubstr("max parallelism 256"));
  }
  EXPECT_THROW(assignStates(twoOperatorCheckpoint(1), {{"agg", {129, 128}}, {"src", {2, 128}}}, false), ConfigError);
}

TEST(StateAssignmentTest, UnclaimedStateFailsUnlessAllowed) {
  try {
    assignStates(twoOperatorCheckpoint(1), {{"agg", {2, 128}}}, false);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("operator 'src'"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("execution.state-recovery.ignore-unclaimed-state"));
  }
  const StateAssignment a = assignStates(twoOperatorCheckpoint(1), {{"agg", {2, 128}}}, true);
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(a.count("src"), 0u);

  // An operator whose subtasks hold nothing is no unclaimed state (Flink skips empty OperatorStates).
  CompletedCheckpoint c = twoOperatorCheckpoint(1);
  c.operators["src"].subtasks.assign(2, OperatorSubtaskState{});
  EXPECT_EQ(assignStates(c, {{"agg", {2, 128}}}, false).size(), 1u);
}

}  // namespace
}  // namespace sluice::runtime::checkpoint

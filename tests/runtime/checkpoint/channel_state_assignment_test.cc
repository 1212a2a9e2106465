// assignChannelState on hand-made graphs and checkpoints: which producer replays which in-flight bytes, into
// which channel or through the partitioner (rescale), and what is refused. The bytes are opaque here (the
// assignment never decodes them), so each entry is a short tag and the expected concatenations are written out.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "runtime/checkpoint/channel_state_assignment.h"

namespace sluice::runtime::checkpoint {
namespace {

using graph::ShipStrategy;

graph::JobVertex vertex(const std::string& uid, int parallelism) {
  graph::JobVertex v;
  v.name = uid;
  v.parallelism = parallelism;
  graph::ChainedOperator head;
  head.uid = uid;
  head.name = uid;
  v.operators.push_back(head);
  return v;
}

// src(p) -strategy-> agg(c).
graph::JobGraph twoVertices(int p, int c, ShipStrategy s) {
  graph::JobGraph g;
  g.vertices = {vertex("src", p), vertex("agg", c)};
  graph::JobEdge e;
  e.source_vertex = 0;
  e.target_vertex = 1;
  e.partitioner.strategy = s;
  g.edges.push_back(e);
  g.vertices[0].outputs = {0};
  g.vertices[1].inputs = {0};
  return g;
}

// The -p 2 / -p 2 checkpoint: agg 0 recorded "I10" from src 1, agg 1 "I01" from src 0; src 0 overtook "O01"
// towards agg 1, src 1 "O11" towards agg 1.
CompletedCheckpoint inFlight() {
  CompletedCheckpoint c;
  c.checkpoint_id = 5;
  OperatorState src;
  src.parallelism = 2;
  src.subtasks.resize(2);
  src.subtasks[0].channel.output.push_back({0, 1, "O01"});
  src.subtasks[1].channel.output.push_back({0, 1, "O11"});
  OperatorState agg;
  agg.parallelism = 2;
  agg.subtasks.resize(2);
  agg.subtasks[0].channel.input.push_back({0, 1, "I10"});
  agg.subtasks[1].channel.input.push_back({0, 0, "I01"});
  c.operators["src"] = src;
  c.operators["agg"] = agg;
  return c;
}

TEST(ChannelStateAssignmentTest, AtTheSameParallelismEachChannelGetsItsInputThenOutputState) {
  const auto r = assignChannelState(inFlight(), twoVertices(2, 2, ShipStrategy::kHash), false);
  ASSERT_EQ(r[0].size(), 2u);
  EXPECT_EQ(r[0][0].channels[0], (std::vector<std::string>{"", "I01O01"}));
  EXPECT_EQ(r[0][1].channels[0], (std::vector<std::string>{"I10", "O11"}));
  EXPECT_EQ(r[0][0].rerouted[0], "");
  EXPECT_EQ(r[0][1].rerouted[0], "");
  EXPECT_EQ(r[0][0].bytes() + r[0][1].bytes(), 12);
  EXPECT_TRUE(r[1][0].channels.empty());  // agg has no outputs
}

TEST(ChannelStateAssignmentTest, ARescaledHashEdgeIsRoutedAgainByTheProducerIModTheNewParallelism) {
  // The consumer grows to 3: every old channel's bytes are rerouted by the producer that had them.
  auto r = assignChannelState(inFlight(), twoVertices(2, 3, ShipStrategy::kHash), false);
  EXPECT_EQ(r[0][0].rerouted[0], "I01O01");
  EXPECT_EQ(r[0][1].rerouted[0], "I10O11");
  EXPECT_EQ(r[0][0].channels[0], (std::vector<std::string>{}));
  // The producer shrinks to 1: it reroutes both old producers' channels, old producer 0's first.
  r = assignChannelState(inFlight(), twoVertices(1, 2, ShipStrategy::kHash), false);
  ASSERT_EQ(r[0].size(), 1u);
  EXPECT_EQ(r[0][0].rerouted[0], "I01O01I10O11");
  // The producer grows to 3: the new producer 2 has nothing to resend.
  r = assignChannelState(inFlight(), twoVertices(3, 1, ShipStrategy::kRebalance), false);
  EXPECT_EQ(r[0][0].rerouted[0], "I01O01");
  EXPECT_EQ(r[0][1].rerouted[0], "I10O11");
  EXPECT_EQ(r[0][2].rerouted[0], "");
}

TEST(ChannelStateAssignmentTest, InFlightDataOfAPointwiseOrBroadcastEdgeIsNotRescaled) {
  for (ShipStrategy s : {ShipStrategy::kForward, ShipStrategy::kRescale, ShipStrategy::kBroadcast}) {
    try {
      assignChannelState(inFlight(), twoVertices(3, 3, s), false);
      ADD_FAILURE() << "no UserError for " << graph::shipStrategyName(s);
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("of the {} edge from 'src' (2 -> 3) to 'agg' (2 -> 3)",
                                                       graph::shipStrategyName(s))),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ChannelStateAssignmentTest, AnEntryForASubtaskTheCheckpointDidNotHaveIsCorrupt) {
  CompletedCheckpoint c = inFlight();
  c.operators["agg"].subtasks[0].channel.input.push_back({0, 2, "bad"});  // src had 2 subtasks
  EXPECT_THROW(assignChannelState(c, twoVertices(2, 2, ShipStrategy::kHash), false), InputError);
  c = inFlight();
  c.operators["src"].subtasks[0].channel.output.push_back({1, 0, "bad"});  // src has one output
  EXPECT_THROW(assignChannelState(c, twoVertices(2, 2, ShipStrategy::kHash), false), InputError);
}

TEST(ChannelStateAssignmentTest, ChannelStateOfAnUnknownOperatorNeedsAllowNonRestoredState) {
  CompletedCheckpoint c = inFlight();
  c.operators["gone"] = c.operators["src"];
  EXPECT_THROW(assignChannelState(c, twoVertices(2, 2, ShipStrategy::kHash), false), UserError);
  EXPECT_NO_THROW(assignChannelState(c, twoVertices(2, 2, ShipStrategy::kHash), true));
}

TEST(ChannelStateAssignmentTest, ATaskWithAPointwiseOrBroadcastInputTakesOnlyAlignedBarriers) {
  // a -HASH-> c, b -FORWARD-> c, a -REBALANCE-> d: both inputs of c are forced aligned (Flink marks every
  // input of such a node), d's is not.
  graph::JobGraph g;
  g.vertices = {vertex("a", 2), vertex("b", 2), vertex("c", 2), vertex("d", 2)};
  const auto edge = [&](int from, int to, ShipStrategy s) {
    graph::JobEdge e;
    e.source_vertex = from;
    e.target_vertex = to;
    e.partitioner.strategy = s;
    g.edges.push_back(e);
    const int id = static_cast<int>(g.edges.size()) - 1;
    g.vertices[static_cast<size_t>(from)].outputs.push_back(id);
    g.vertices[static_cast<size_t>(to)].inputs.push_back(id);
  };
  edge(0, 2, ShipStrategy::kHash);
  edge(1, 2, ShipStrategy::kForward);
  edge(0, 3, ShipStrategy::kRebalance);
  EXPECT_FALSE(supportsUnalignedCheckpoints(g, 0));
  EXPECT_FALSE(supportsUnalignedCheckpoints(g, 1));
  EXPECT_TRUE(supportsUnalignedCheckpoints(g, 2));
  EXPECT_FALSE(supportsUnalignedCheckpoints(twoVertices(2, 2, ShipStrategy::kBroadcast), 0));
  EXPECT_TRUE(supportsUnalignedCheckpoints(twoVertices(2, 2, ShipStrategy::kGlobal), 0));
}

}  // namespace
}  // namespace sluice::runtime::checkpoint

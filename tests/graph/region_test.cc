// Pipelined regions and slot sharing groups (FLINK-14060; StreamingJobGraphGeneratorTest slot sharing
// scenarios), and how the plan shows them.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/config.h"
#include "graph/job_graph.h"
#include "graph/pipelined_region.h"
#include "graph/plan.h"

namespace sluice::graph {
namespace {

class Factory : public OperatorFactory {
 public:
  explicit Factory(bool source) : source_(source) {}
  bool isSource() const override { return source_; }
  ChainingStrategy chainingStrategy() const override {
    return source_ ? ChainingStrategy::kHead : ChainingStrategy::kAlways;
  }

 private:
  bool source_;
};

class Builder {
 public:
  TransformationPtr source(const std::string& name, int p = 2) {
    return add(name, TransformationKind::kSource, p, {}, true);
  }
  TransformationPtr op(const std::string& name, std::vector<TransformationPtr> in, int p = 2) {
    return add(name, TransformationKind::kOneInput, p, std::move(in), false);
  }
  TransformationPtr rebalance(TransformationPtr in, ExchangeMode mode = ExchangeMode::kUndefined) {
    auto t = add("Partition", TransformationKind::kPartition, -1, {std::move(in)}, false);
    t->factory = nullptr;
    t->partitioner.strategy = ShipStrategy::kRebalance;
    t->exchange_mode = mode;
    return t;
  }

 private:
  TransformationPtr add(const std::string& name, TransformationKind kind, int p, std::vector<TransformationPtr> in,
                        bool source) {
    auto t = std::make_shared<Transformation>();
    t->id = ++next_id_;
    t->name = name;
    t->kind = kind;
    t->parallelism = p;
    t->inputs = std::move(in);
    t->factory = std::make_shared<Factory>(source);
    return t;
  }
  int next_id_ = 0;
};

Configuration mode(const std::string& m) {
  Configuration c;
  c.set("execution.runtime-mode", m);
  return c;
}

// Source: A -REBALANCE-> B -REBALANCE-> C.
struct Abc {
  Builder b;
  TransformationPtr a, bb, c;
  Abc() {
    a = b.source("A");
    bb = b.op("B", {b.rebalance(a)});
    c = b.op("C", {b.rebalance(bb)});
  }
};

TEST(PipelinedRegionTest, StreamingJobHasOneRegionAndOneGroup) {
  Abc j;
  JobGraph g = buildJobGraph({j.c}, mode("STREAMING"), "abc");
  ASSERT_EQ(g.vertices.size(), 3u);
  ASSERT_EQ(g.regions.size(), 1u);
  EXPECT_EQ(g.regions[0].vertices, (std::vector<int>{0, 1, 2}));
  for (const auto& v : g.vertices) {
    EXPECT_EQ(v.pipelined_region, 0);
    EXPECT_EQ(v.slot_sharing_group, "default");
  }
}

TEST(PipelinedRegionTest, BatchChainOfThreeHasThreeRegionsAndThreeGroups) {
  Abc j;
  JobGraph g = buildJobGraph({j.c}, mode("BATCH"), "abc");
  ASSERT_EQ(g.vertices.size(), 3u);
  for (const auto& e : g.edges) EXPECT_EQ(e.exchange_mode, ExchangeMode::kBatch);
  ASSERT_EQ(g.regions.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(g.regions[static_cast<size_t>(i)].vertices, std::vector<int>{i});
    EXPECT_EQ(g.vertices[static_cast<size_t>(i)].pipelined_region, i);
  }
  EXPECT_EQ(g.vertices[0].slot_sharing_group, "default-region-0");
  EXPECT_EQ(g.vertices[1].slot_sharing_group, "default-region-1");
  EXPECT_EQ(g.vertices[2].slot_sharing_group, "default-region-2");

  const auto plan = nlohmann::json::parse(jobGraphToJson(g));
  EXPECT_EQ(plan["type"], "BATCH");
  EXPECT_EQ(plan["nodes"][2]["slot_sharing_group"], "default-region-2");
  EXPECT_EQ(plan["nodes"][2]["pipelined_region"], 2);
  EXPECT_EQ(plan["nodes"][1]["inputs"][0]["exchange"], "blocking");
  const std::string text = jobGraphToText(g);
  EXPECT_NE(text.find("slot-sharing-group=default-region-1 pipelined-region=1"), std::string::npos) << text;
}

TEST(PipelinedRegionTest, UserNamedGroupSpanningRegionsIsKept) {
  Abc j;
  j.a->slot_sharing_group = "shared";
  j.c->slot_sharing_group = "shared";
  JobGraph g = buildJobGraph({j.c}, mode("BATCH"), "abc");
  ASSERT_EQ(g.regions.size(), 3u);
  EXPECT_EQ(g.vertices[0].slot_sharing_group, "shared");
  // B names no group, so it takes its input's (Flink's determineSlotSharingGroup): "shared" too.
  EXPECT_EQ(g.vertices[1].slot_sharing_group, "shared");
  EXPECT_EQ(g.vertices[2].slot_sharing_group, "shared");
}

TEST(PipelinedRegionTest, OperatorWithoutGroupInheritsItsInputsGroupOrDefault) {
  Abc j;
  j.a->slot_sharing_group = "shared";
  j.bb->slot_sharing_group = "default";
  JobGraph g = buildJobGraph({j.c}, mode("BATCH"), "abc");
  EXPECT_EQ(g.vertices[0].slot_sharing_group, "shared");
  // B is put in "default" by name, which BATCH splits per region; C inherits B's group.
  EXPECT_EQ(g.vertices[1].slot_sharing_group, "default-region-1");
  EXPECT_EQ(g.vertices[2].slot_sharing_group, "default-region-2");
}

// Flink's testSlotSharingOnAllVerticesInSameSlotSharingGroupByDefault{Enabled,Disabled}:
// source1 -> map1 and source2 -> map2 through rebalance edges.
struct TwoPipelines {
  Builder b;
  TransformationPtr s1, s2, m1, m2;
  TwoPipelines() {
    s1 = b.source("source1");
    s2 = b.source("source2");
    m1 = b.op("map1", {b.rebalance(s1)});
    m2 = b.op("map2", {b.rebalance(s2)});
  }
};

TEST(PipelinedRegionTest, AllVerticesInOneDefaultGroupInStreamingExceptANamedOne) {
  TwoPipelines j;
  j.m1->slot_sharing_group = "testSlotSharingGroup";
  JobGraph g = buildJobGraph({j.m1, j.m2}, mode("STREAMING"), "two");
  ASSERT_EQ(g.vertices.size(), 4u);
  std::map<std::string, std::string> group;
  for (const auto& v : g.vertices) group[v.name] = v.slot_sharing_group;
  EXPECT_EQ(group["Source: source1"], "default");
  EXPECT_EQ(group["Source: source2"], "default");
  EXPECT_EQ(group["map2"], "default");
  EXPECT_EQ(group["map1"], "testSlotSharingGroup");
  // Two connected components: two regions, still one default group.
  EXPECT_EQ(g.regions.size(), 2u);
}

TEST(PipelinedRegionTest, EveryRegionHasItsOwnGroupInBatch) {
  TwoPipelines j;
  JobGraph g = buildJobGraph({j.m1, j.m2}, mode("BATCH"), "two");
  ASSERT_EQ(g.vertices.size(), 4u);
  ASSERT_EQ(g.regions.size(), 4u);  // every edge blocking
  std::set<std::string> groups;
  for (const auto& v : g.vertices) groups.insert(v.slot_sharing_group);
  EXPECT_EQ(groups.size(), 4u);
}

TEST(PipelinedRegionTest, ExplicitBlockingEdgeSplitsRegionsButStreamingKeepsOneGroup) {
  Builder b;
  auto a = b.source("A");
  auto bb = b.op("B", {b.rebalance(a, ExchangeMode::kBatch)});
  auto c = b.op("C", {b.rebalance(bb)});
  JobGraph g = buildJobGraph({c}, mode("STREAMING"), "abc");
  ASSERT_EQ(g.regions.size(), 2u);
  EXPECT_EQ(g.regions[0].vertices, std::vector<int>{0});
  EXPECT_EQ(g.regions[1].vertices, (std::vector<int>{1, 2}));
  for (const auto& v : g.vertices) EXPECT_EQ(v.slot_sharing_group, "default");
}

TEST(PipelinedRegionTest, RegionsMergeAcrossPipelinedEdgesFromDifferentSides) {
  // A -> C blocking, B -> C pipelined, A -> D pipelined: {A, D} and {B, C}; ids by first vertex.
  Builder b;
  auto a = b.source("A");
  auto bs = b.source("B");
  auto c = b.op("C", {b.rebalance(a, ExchangeMode::kBatch), b.rebalance(bs, ExchangeMode::kPipelined)});
  auto d = b.op("D", {b.rebalance(a, ExchangeMode::kPipelined)});
  JobGraph g = buildJobGraph({c, d}, Configuration(), "mix");
  ASSERT_EQ(g.vertices.size(), 4u);
  std::map<std::string, int> region;
  for (const auto& v : g.vertices) region[v.name] = v.pipelined_region;
  EXPECT_EQ(region["Source: A"], region["D"]);
  EXPECT_EQ(region["Source: B"], region["C"]);
  EXPECT_NE(region["Source: A"], region["C"]);
  EXPECT_EQ(region["Source: A"], 0);  // vertex 0 is Source: A (smallest id first)
  EXPECT_EQ(g.regions.size(), 2u);
}

TEST(PlanDotTest, DotShowsChainsRegionsAndGroups) {
  Abc j;
  j.bb->slot_sharing_group = "named";
  JobGraph g = buildJobGraph({j.c}, mode("BATCH"), "abc");
  const std::string dot = jobGraphToDot(g);
  EXPECT_EQ(dot.rfind("digraph \"abc\" {", 0), 0u) << dot;
  for (const char* s : {"subgraph cluster_r0 {", "subgraph cluster_r1 {", "subgraph cluster_r2 {",
                        "label=\"pipelined region 1\"", "label=\"slot sharing group named\"",
                        "label=\"slot sharing group default-region-0\"", "style=dashed"}) {
    EXPECT_NE(dot.find(s), std::string::npos) << s << "\n" << dot;
  }
  // Two plans in one text, as `explain --format=json` prints for a script with two jobs.
  const std::string two = jobGraphToJson(g) + "\n" + jobGraphToJson(g) + "\n";
  const auto docs = splitJsonDocuments(two);
  ASSERT_EQ(docs.size(), 2u);
  const std::string both = planJsonToDot(docs);
  EXPECT_NE(both.find("subgraph cluster_job1 {"), std::string::npos) << both;
  EXPECT_NE(both.find("j1v2"), std::string::npos) << both;
}

TEST(PlanDotTest, ChainedOperatorsAreListedInTheBox) {
  Builder b;
  auto a = b.source("A");
  auto m = b.op("Map<x>", {a});
  JobGraph g = buildJobGraph({m}, Configuration(), "one");
  const std::string dot = jobGraphToDot(g);
  EXPECT_NE(dot.find("<B>Source: A -&gt; Map&lt;x&gt;</B>"), std::string::npos) << dot;
  EXPECT_NE(dot.find("&#8226; Map&lt;x&gt;"), std::string::npos) << dot;
}

}  // namespace
}  // namespace sluice::graph

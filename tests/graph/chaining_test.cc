// Flink's chaining conditions one at a time (StreamingJobGraphGeneratorTest scenarios): each breaks
// exactly the expected chain of Source: S -> Map -> Filter.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/config.h"
#include "graph/job_graph.h"
#include "graph/plan.h"
#include "graph/stream_graph.h"

namespace sluice::graph {
namespace {

class Factory : public OperatorFactory {
 public:
  Factory(bool source, ChainingStrategy strategy) : source_(source), strategy_(strategy) {}
  bool isSource() const override { return source_; }
  ChainingStrategy chainingStrategy() const override { return strategy_; }

 private:
  bool source_;
  ChainingStrategy strategy_;
};

class Builder {
 public:
  // Sources default to HEAD, as Flink's SourceOperatorFactory; other operators to ALWAYS.
  TransformationPtr source(const std::string& name, int p = 2) {
    return add(name, TransformationKind::kSource, p, {}, std::make_shared<Factory>(true, ChainingStrategy::kHead));
  }
  TransformationPtr op(const std::string& name, std::vector<TransformationPtr> in, int p = 2) {
    return add(name, TransformationKind::kOneInput, p, std::move(in),
               std::make_shared<Factory>(false, ChainingStrategy::kAlways));
  }
  TransformationPtr partition(TransformationPtr in, ShipStrategy s, ExchangeMode mode = ExchangeMode::kUndefined) {
    auto t = add("Partition", TransformationKind::kPartition, -1, {std::move(in)}, nullptr);
    t->partitioner.strategy = s;
    if (s == ShipStrategy::kHash) t->partitioner.key_columns = {0};
    t->exchange_mode = mode;
    return t;
  }
  TransformationPtr unite(std::vector<TransformationPtr> in) {
    return add("Union", TransformationKind::kUnion, -1, std::move(in), nullptr);
  }

 private:
  TransformationPtr add(const std::string& name, TransformationKind kind, int p, std::vector<TransformationPtr> in,
                        std::shared_ptr<const OperatorFactory> factory) {
    auto t = std::make_shared<Transformation>();
    t->id = ++next_id_;
    t->name = name;
    t->kind = kind;
    t->parallelism = p;
    t->inputs = std::move(in);
    t->factory = std::move(factory);
    return t;
  }
  int next_id_ = 0;
};

// Source: S -> Map -> Filter, all parallelism 2 with FORWARD edges: every condition holds.
struct Line {
  Builder b;
  TransformationPtr src, map, filter;
  Line() {
    src = b.source("S");
    map = b.op("Map", {src});
    filter = b.op("Filter", {map});
  }
};

std::vector<std::string> names(const JobGraph& g) {
  std::vector<std::string> out;
  for (const auto& v : g.vertices) out.push_back(v.name);
  return out;
}

using Names = std::vector<std::string>;

JobGraph build(const TransformationPtr& sink, const Configuration& conf = Configuration()) {
  return buildJobGraph({sink}, conf, "job");
}

TEST(ChainingRulesTest, AllConditionsHoldGivesOneChain) {
  Line l;
  JobGraph g = build(l.filter);
  EXPECT_EQ(names(g), Names{"Source: S -> Map -> Filter"});
  ASSERT_EQ(g.vertices[0].operators.size(), 3u);
  EXPECT_EQ(g.vertices[0].operators[1].node_id, l.map->id);
  EXPECT_TRUE(g.edges.empty());
}

TEST(ChainingRulesTest, DifferentParallelismAloneBreaksTheChain) {
  // Only the parallelism differs: the StreamGraph keeps its FORWARD edge (which the generator would
  // reject between different parallelisms), so nothing but the parallelism rule can break the chain.
  Line l;
  Configuration conf;
  StreamGraph sg = StreamGraphGenerator(conf).generate({l.filter}, "job");
  sg.nodes[static_cast<size_t>(sg.indexOf(l.filter->id))].parallelism = 3;
  ASSERT_EQ(sg.edges[1].partitioner.strategy, ShipStrategy::kForward);
  EXPECT_TRUE(StreamingJobGraphGenerator::isChainable(sg, sg.edges[0]));
  EXPECT_FALSE(StreamingJobGraphGenerator::isChainable(sg, sg.edges[1]));
  JobGraph g = StreamingJobGraphGenerator::createJobGraph(sg);
  EXPECT_EQ(names(g), (Names{"Source: S -> Map", "Filter"}));
}

TEST(ChainingRulesTest, EveryNonForwardPartitionerBreaksTheChain) {
  for (ShipStrategy s : {ShipStrategy::kRebalance, ShipStrategy::kRescale, ShipStrategy::kShuffle,
                         ShipStrategy::kBroadcast, ShipStrategy::kGlobal, ShipStrategy::kHash}) {
    Builder b;
    auto src = b.source("S");
    auto map = b.op("Map", {src});
    auto filter = b.op("Filter", {b.partition(map, s)});
    JobGraph g = build(filter);
    EXPECT_EQ(names(g), (Names{"Source: S -> Map", "Filter"})) << shipStrategyName(s);
    ASSERT_EQ(g.edges.size(), 1u);
    EXPECT_EQ(g.edges[0].partitioner.strategy, s);
  }
}

TEST(ChainingRulesTest, ExplicitForwardPartitionChains) {
  Builder b;
  auto src = b.source("S");
  auto map = b.op("Map", {b.partition(src, ShipStrategy::kForward)});
  EXPECT_EQ(names(build(map)), Names{"Source: S -> Map"});
}

TEST(ChainingRulesTest, TwoInputEdgesBreakTheChainEvenIfEachIsChainable) {
  // Two sources into one operator: both edges are FORWARD with equal parallelism, but the target has
  // two in edges (Flink's first condition).
  Builder b;
  auto s1 = b.source("A");
  auto s2 = b.source("B");
  auto map = b.op("Map", {s1, s2});
  Configuration conf;
  StreamGraph sg = StreamGraphGenerator(conf).generate({map}, "job");
  ASSERT_EQ(sg.edges.size(), 2u);
  // Give the second edge its own input index, as a two-input operator has: each edge alone would be a
  // chainable input, yet neither chains because the target has two in edges.
  sg.edges[1].type_number = 1;
  EXPECT_TRUE(StreamingJobGraphGenerator::isChainableInput(sg, sg.edges[0]));
  EXPECT_FALSE(StreamingJobGraphGenerator::isChainable(sg, sg.edges[0]));
  EXPECT_EQ(names(StreamingJobGraphGenerator::createJobGraph(sg)), (Names{"Source: A", "Source: B", "Map"}));
}

TEST(ChainingRulesTest, UnionGoesThroughTheNetwork) {
  // A union feeds both inputs into input index 0: the union guard rejects the edge even as an input.
  Builder b;
  auto s1 = b.source("A");
  auto s2 = b.source("B");
  auto map = b.op("Map", {b.unite({s1, s2})});
  Configuration conf;
  StreamGraph sg = StreamGraphGenerator(conf).generate({map}, "job");
  ASSERT_EQ(sg.edges.size(), 2u);
  EXPECT_EQ(sg.edges[0].type_number, sg.edges[1].type_number);
  EXPECT_FALSE(StreamingJobGraphGenerator::isChainableInput(sg, sg.edges[0]));
  JobGraph g = StreamingJobGraphGenerator::createJobGraph(sg);
  EXPECT_EQ(names(g), (Names{"Source: A", "Source: B", "Map"}));
  EXPECT_EQ(g.vertices[2].inputs.size(), 2u);
}

TEST(ChainingRulesTest, DifferentSlotSharingGroupBreaksTheChain) {
  Line l;
  l.filter->slot_sharing_group = "g";
  EXPECT_EQ(names(build(l.filter)), (Names{"Source: S -> Map", "Filter"}));
}

TEST(ChainingRulesTest, SameNamedSlotSharingGroupStillChains) {
  Line l;
  l.map->slot_sharing_group = "g";
  l.filter->slot_sharing_group = "g";
  JobGraph g = build(l.filter);
  EXPECT_EQ(names(g), (Names{"Source: S", "Map -> Filter"}));
  EXPECT_EQ(g.vertices[1].slot_sharing_group, "g");
}

TEST(ChainingRulesTest, NeverOnAMiddleOperatorIsolatesIt) {
  Line l;
  l.map->chaining_strategy = ChainingStrategy::kNever;  // DataStream disableChaining()
  EXPECT_EQ(names(build(l.filter)), (Names{"Source: S", "Map", "Filter"}));
}

TEST(ChainingRulesTest, NeverOnTheSourceKeepsItAlone) {
  Line l;
  l.src->chaining_strategy = ChainingStrategy::kNever;
  EXPECT_EQ(names(build(l.filter)), (Names{"Source: S", "Map -> Filter"}));
}

TEST(ChainingRulesTest, HeadStartsANewChainThatContinues) {
  Line l;
  l.map->chaining_strategy = ChainingStrategy::kHead;  // DataStream startNewChain()
  EXPECT_EQ(names(build(l.filter)), (Names{"Source: S", "Map -> Filter"}));
}

TEST(ChainingRulesTest, HeadWithSourcesAcceptsOnlyASource) {
  {
    Line l;
    l.map->chaining_strategy = ChainingStrategy::kHeadWithSources;  // its input is the source: chained
    EXPECT_EQ(names(build(l.filter)), Names{"Source: S -> Map -> Filter"});
  }
  {
    Line l;
    l.filter->chaining_strategy = ChainingStrategy::kHeadWithSources;  // its input is Map: not chained
    EXPECT_EQ(names(build(l.filter)), (Names{"Source: S -> Map", "Filter"}));
  }
}

TEST(ChainingRulesTest, ChainingDisabledGloballyGivesOneVertexPerOperator) {
  Line l;
  Configuration conf;
  conf.set("pipeline.operator-chaining.enabled", "false");
  EXPECT_EQ(names(build(l.filter, conf)), (Names{"Source: S", "Map", "Filter"}));
}

TEST(ChainingRulesTest, BlockingExchangeBreaksAForwardChain) {
  // Flink's testExchangeModeBatch: a FORWARD edge with BATCH exchange is not chained and is BLOCKING.
  Builder b;
  auto src = b.source("S");
  auto map = b.op("Map", {src});
  auto filter = b.op("Filter", {b.partition(map, ShipStrategy::kForward, ExchangeMode::kBatch)});
  JobGraph g = build(filter);
  EXPECT_EQ(names(g), (Names{"Source: S -> Map", "Filter"}));
  ASSERT_EQ(g.edges.size(), 1u);
  EXPECT_EQ(g.edges[0].exchange_mode, ExchangeMode::kBatch);
  const auto plan = nlohmann::json::parse(jobGraphToJson(g));
  EXPECT_EQ(plan["nodes"][1]["inputs"][0]["exchange"], "blocking");
}

TEST(ChainingRulesTest, PipelinedExchangeChainsAndRescaleIsPipelinedBounded) {
  // Flink's testExchangeModePipelined: forward + PIPELINED chains; the following rescale edge is
  // PIPELINED_BOUNDED.
  Builder b;
  auto src = b.source("S");
  auto map = b.op("Map", {b.partition(src, ShipStrategy::kForward, ExchangeMode::kPipelined)});
  auto sink = b.op("Sink: out", {b.partition(map, ShipStrategy::kRescale, ExchangeMode::kPipelined)});
  JobGraph g = build(sink);
  EXPECT_EQ(names(g), (Names{"Source: S -> Map", "Sink: out"}));
  EXPECT_EQ(g.edges[0].exchange_mode, ExchangeMode::kPipelined);
  const auto plan = nlohmann::json::parse(jobGraphToJson(g));
  EXPECT_EQ(plan["nodes"][1]["inputs"][0]["exchange"], "pipelined_bounded");
}

TEST(ChainingRulesTest, BatchRuntimeModeKeepsForwardChainsAndBlocksTheRest) {
  // UNDEFINED edges still chain in BATCH mode; only the non-chained edge becomes blocking.
  Builder b;
  auto src = b.source("S");
  auto map = b.op("Map", {src});
  auto sum = b.op("Sum", {b.partition(map, ShipStrategy::kHash)});
  Configuration conf;
  conf.set("execution.runtime-mode", "BATCH");
  JobGraph g = build(sum, conf);
  EXPECT_EQ(names(g), (Names{"Source: S -> Map", "Sum"}));
  EXPECT_EQ(g.edges[0].exchange_mode, ExchangeMode::kBatch);
  EXPECT_EQ(g.runtime_mode, RuntimeMode::kBatch);
}

TEST(ChainingRulesTest, DifferentMaxParallelismChainsOnlyWhenTheOptionAllowsIt) {
  // Flink's testChainingOfOperatorsWithDifferentMaxParallelism: max parallelism 10 for the job, 1 for
  // the second map; parallelism 1 throughout.
  for (const bool allowed : {true, false}) {
    Builder b;
    auto src = b.source("S", 1);
    auto m1 = b.op("Map1", {src}, 1);
    auto m2 = b.op("Map2", {m1}, 1);
    m2->max_parallelism = 1;
    auto m3 = b.op("Map3", {m2}, 1);
    Configuration conf;
    conf.set("pipeline.max-parallelism", "10");
    conf.set("pipeline.operator-chaining.chain-operators-with-different-max-parallelism", allowed ? "true" : "false");
    JobGraph g = build(m3, conf);
    if (allowed) {
      ASSERT_EQ(g.vertices.size(), 1u);
      EXPECT_EQ(g.vertices[0].operators.size(), 4u);
    } else {
      // 10 | 1 | 10: every max parallelism change starts a vertex: 2, 1 and 1 operators.
      ASSERT_EQ(g.vertices.size(), 3u);
      EXPECT_EQ(g.vertices[0].operators.size(), 2u);
      EXPECT_EQ(g.vertices[1].operators.size(), 1u);
      EXPECT_EQ(g.vertices[2].operators.size(), 1u);
      EXPECT_EQ(g.vertices[1].max_parallelism, 1);
    }
  }
}

TEST(ChainingRulesTest, ChainStartAndEndAsFlink) {
  // Flink's testChainStartEndSetting: a parallelism-1 source feeding map -> print at parallelism 2
  // gives two vertices joined by a PIPELINED_BOUNDED edge.
  Builder b;
  auto src = b.source("S", 1);
  auto map = b.op("Map", {src}, 2);
  auto print = b.op("Sink: Print to Std. Out", {map}, 2);
  JobGraph g = build(print);
  EXPECT_EQ(names(g), (Names{"Source: S", "Map -> Sink: Print to Std. Out"}));
  ASSERT_EQ(g.edges.size(), 1u);
  EXPECT_EQ(g.edges[0].partitioner.strategy, ShipStrategy::kRebalance);
  EXPECT_EQ(g.edges[0].exchange_mode, ExchangeMode::kPipelined);
}

TEST(ChainingRulesTest, NestedFanOutNames) {
  Builder b;
  auto src = b.source("S");
  auto map = b.op("Map", {src});
  auto filter = b.op("Filter", {map});
  auto a = b.op("Sink: a", {filter});
  auto c = b.op("Sink: c", {map});
  JobGraph g = buildJobGraph({a, c}, Configuration(), "job");
  EXPECT_EQ(names(g), Names{"Source: S -> Map -> (Filter -> Sink: a, Sink: c)"});
}

TEST(ChainingRulesTest, UnionInputOrderIsDeterministic) {
  // Flink's testDeterministicUnionOrder: the sink's inputs follow the union's input order every time.
  std::vector<std::string> first_ids;
  for (int round = 0; round < 20; ++round) {
    Builder b;
    std::vector<TransformationPtr> sources;
    for (const char* n : {"s1", "s2", "s3", "s4"}) sources.push_back(b.source(n, 1));
    auto sink = b.op("Sink: out", {b.unite({sources[2], sources[0], sources[3], sources[1]})}, 1);
    JobGraph g = build(sink);
    ASSERT_EQ(g.vertices.size(), 5u);
    const JobVertex& sv = g.vertices[4];
    std::vector<std::string> order;
    for (int e : sv.inputs) order.push_back(g.vertices[static_cast<size_t>(g.edges[static_cast<size_t>(e)].source_vertex)].name);
    EXPECT_EQ(order, (Names{"Source: s3", "Source: s1", "Source: s4", "Source: s2"}));
    std::vector<std::string> ids;
    for (const auto& v : g.vertices) ids.push_back(v.id);
    if (round == 0) first_ids = ids;
    EXPECT_EQ(ids, first_ids);
  }
}

TEST(ChainingRulesTest, UidFixesTheVertexIdWhateverSurroundsIt) {
  Builder b1;
  auto s1 = b1.source("S");
  auto m1 = b1.op("Map", {b1.partition(s1, ShipStrategy::kRebalance)});
  m1->uid = "my-map";
  Builder b2;
  auto s2 = b2.source("Other", 3);
  auto x2 = b2.op("Extra", {s2}, 3);
  auto m2 = b2.op("Map", {b2.partition(x2, ShipStrategy::kRebalance)});
  m2->uid = "my-map";
  const JobGraph g1 = build(m1), g2 = build(m2);
  EXPECT_EQ(g1.vertices.back().id, g2.vertices.back().id);
  EXPECT_NE(g1.vertices.front().id, g2.vertices.front().id);
  EXPECT_EQ(g1.vertices.back().id.size(), 32u);
}

}  // namespace
}  // namespace sluice::graph

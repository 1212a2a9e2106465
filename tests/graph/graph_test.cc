#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/config.h"
#include "common/error.h"
#include "graph/job_graph.h"
#include "graph/plan.h"
#include "graph/stream_graph.h"

namespace sluice::graph {
namespace {

class TestFactory : public OperatorFactory {
 public:
  TestFactory(bool source, ChainingStrategy strategy) : source_(source), strategy_(strategy) {}
  bool isSource() const override { return source_; }
  ChainingStrategy chainingStrategy() const override { return strategy_; }

 private:
  bool source_;
  ChainingStrategy strategy_;
};

// Builds transformations with increasing ids.
class Builder {
 public:
  TransformationPtr source(const std::string& name, int parallelism = -1) {
    return add(name, TransformationKind::kSource, parallelism, {}, true, ChainingStrategy::kHead);
  }
  TransformationPtr op(const std::string& name, std::vector<TransformationPtr> inputs, int parallelism = -1,
                       ChainingStrategy strategy = ChainingStrategy::kAlways) {
    return add(name, TransformationKind::kOneInput, parallelism, std::move(inputs), false, strategy);
  }
  TransformationPtr sink(const std::string& name, TransformationPtr input, int parallelism = -1) {
    return add(name, TransformationKind::kSink, parallelism, {std::move(input)}, false, ChainingStrategy::kAlways);
  }
  TransformationPtr partition(TransformationPtr input, ShipStrategy s, std::vector<int> keys = {}) {
    auto t = add("Partition", TransformationKind::kPartition, -1, {std::move(input)}, false, ChainingStrategy::kAlways);
    t->factory = nullptr;
    t->partitioner.strategy = s;
    t->partitioner.key_columns = std::move(keys);
    return t;
  }
  TransformationPtr unite(std::vector<TransformationPtr> inputs) {
    auto t = add("Union", TransformationKind::kUnion, -1, std::move(inputs), false, ChainingStrategy::kAlways);
    t->factory = nullptr;
    return t;
  }

 private:
  TransformationPtr add(const std::string& name, TransformationKind kind, int parallelism,
                        std::vector<TransformationPtr> inputs, bool source, ChainingStrategy strategy) {
    auto t = std::make_shared<Transformation>();
    t->id = ++next_id_;
    t->name = name;
    t->kind = kind;
    t->parallelism = parallelism;
    t->inputs = std::move(inputs);
    t->factory = std::make_shared<TestFactory>(source, strategy);
    return t;
  }
  int next_id_ = 0;
};

std::vector<std::string> vertexNames(const JobGraph& g) {
  std::vector<std::string> names;
  for (const auto& v : g.vertices) names.push_back(v.name);
  return names;
}

TEST(MaxParallelismTest, DerivedAsFlinkDoes) {
  // roundUpToPowerOfTwo(p + p/2), clamped to [128, 32768].
  EXPECT_EQ(computeDefaultMaxParallelism(1), 128);       // 1 -> 1 -> 128
  EXPECT_EQ(computeDefaultMaxParallelism(4), 128);       // 6 -> 8 -> 128
  EXPECT_EQ(computeDefaultMaxParallelism(100), 256);     // 150 -> 256
  EXPECT_EQ(computeDefaultMaxParallelism(200), 512);     // 300 -> 512
  EXPECT_EQ(computeDefaultMaxParallelism(30000), 32768); // 45000 -> 65536 -> 32768
}

TEST(StreamGraphGeneratorTest, ResolvesParallelismAndMaxParallelism) {
  Configuration conf;
  conf.set("parallelism.default", "4");
  Builder b;
  auto src = b.source("src");
  auto map = b.op("Map", {src}, 200);
  auto sink = b.sink("Sink: out", map);
  StreamGraph g = StreamGraphGenerator(conf).generate({sink});
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.node(src->id).parallelism, 4);
  EXPECT_EQ(g.node(src->id).max_parallelism, 128);
  EXPECT_EQ(g.node(map->id).parallelism, 200);
  EXPECT_EQ(g.node(map->id).max_parallelism, 512);
  EXPECT_EQ(g.node(src->id).operator_name, "Source: src");
  EXPECT_EQ(g.node(src->id).slot_sharing_group, "default");

  conf.set("pipeline.max-parallelism", "256");
  StreamGraph g2 = StreamGraphGenerator(conf).generate({sink});
  EXPECT_EQ(g2.node(src->id).max_parallelism, 256);
  EXPECT_EQ(g2.node(map->id).max_parallelism, 256);

  conf.set("pipeline.max-parallelism", "100");
  EXPECT_THROW(StreamGraphGenerator(conf).generate({sink}), UserError);  // 200 > 100
}

TEST(StreamGraphGeneratorTest, DefaultPartitionerIsForwardOrRebalance) {
  Configuration conf;
  Builder b;
  auto src = b.source("src", 2);
  auto same = b.op("Same", {src}, 2);
  auto wider = b.op("Wider", {same}, 3);
  auto sink = b.sink("Sink", wider, 3);
  StreamGraph g = StreamGraphGenerator(conf).generate({sink});
  ASSERT_EQ(g.edges.size(), 3u);
  EXPECT_EQ(g.edges[0].partitioner.strategy, ShipStrategy::kForward);    // 2 -> 2
  EXPECT_EQ(g.edges[1].partitioner.strategy, ShipStrategy::kRebalance);  // 2 -> 3
  EXPECT_EQ(g.edges[2].partitioner.strategy, ShipStrategy::kForward);    // 3 -> 3
  // No explicit exchange mode: UNDEFINED until the JobGraph resolves it (PIPELINED in STREAMING).
  for (const auto& e : g.edges) EXPECT_EQ(e.exchange_mode, ExchangeMode::kUndefined);
}

TEST(StreamGraphGeneratorTest, ForwardBetweenDifferentParallelismIsAnError) {
  Configuration conf;
  Builder b;
  auto src = b.source("src", 2);
  auto fwd = b.partition(src, ShipStrategy::kForward);
  auto sink = b.sink("Sink", fwd, 3);
  try {
    StreamGraphGenerator(conf).generate({sink});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Forward partitioning does not allow change of parallelism"), std::string::npos);
  }
}

TEST(StreamGraphGeneratorTest, UnionKeepsInputOrderAndPartitionAppliesToAllItsInputs) {
  Configuration conf;
  Builder b;
  auto a = b.source("a");
  auto c = b.source("c");
  auto u = b.unite({c, a});  // order: c first
  auto hashed = b.partition(u, ShipStrategy::kHash, {1});
  auto agg = b.op("Agg", {hashed});
  StreamGraph g = StreamGraphGenerator(conf).generate({agg});
  const StreamNode& n = g.node(agg->id);
  ASSERT_EQ(n.in_edges.size(), 2u);
  EXPECT_EQ(g.edges[static_cast<size_t>(n.in_edges[0])].source_id, c->id);
  EXPECT_EQ(g.edges[static_cast<size_t>(n.in_edges[1])].source_id, a->id);
  for (int e : n.in_edges) {
    EXPECT_EQ(g.edges[static_cast<size_t>(e)].partitioner.strategy, ShipStrategy::kHash);
    EXPECT_EQ(g.edges[static_cast<size_t>(e)].partitioner.key_columns, std::vector<int>{1});
  }
  // Virtual nodes do not become StreamNodes.
  EXPECT_EQ(g.nodes.size(), 3u);
}

TEST(StreamGraphGeneratorTest, PartitionNearestTheConsumerWins) {
  Configuration conf;
  Builder b;
  auto a = b.source("a");
  auto inner = b.partition(a, ShipStrategy::kShuffle);
  auto outer = b.partition(inner, ShipStrategy::kBroadcast);
  auto sink = b.sink("Sink", outer);
  StreamGraph g = StreamGraphGenerator(conf).generate({sink});
  ASSERT_EQ(g.edges.size(), 1u);
  EXPECT_EQ(g.edges[0].partitioner.strategy, ShipStrategy::kBroadcast);
}

// Source(2) -> Calc(2) -> Sink(2): everything chains.
struct Linear {
  Builder b;
  TransformationPtr src, calc, sink;
  explicit Linear(int calc_parallelism = 2, ChainingStrategy calc_strategy = ChainingStrategy::kAlways) {
    src = b.source("flights", 2);
    calc = b.op("Calc", {src}, calc_parallelism, calc_strategy);
    sink = b.sink("Sink: print", calc, calc_parallelism);
  }
  JobGraph build(const Configuration& conf) const { return buildJobGraph({sink}, conf, "job"); }
};

TEST(ChainingTest, AllConditionsHoldGivesOneVertexWithFlinkName) {
  Configuration conf;
  JobGraph g = Linear().build(conf);
  ASSERT_EQ(g.vertices.size(), 1u);
  EXPECT_EQ(g.vertices[0].name, "Source: flights -> Calc -> Sink: print");
  EXPECT_EQ(g.vertices[0].operators.size(), 3u);
  EXPECT_EQ(g.vertices[0].parallelism, 2);
  EXPECT_TRUE(g.edges.empty());
}

TEST(ChainingTest, DifferentParallelismBreaksTheChain) {
  Configuration conf;
  JobGraph g = Linear(3).build(conf);
  EXPECT_EQ(vertexNames(g), (std::vector<std::string>{"Source: flights", "Calc -> Sink: print"}));
  ASSERT_EQ(g.edges.size(), 1u);
  EXPECT_EQ(g.edges[0].partitioner.strategy, ShipStrategy::kRebalance);
}

TEST(ChainingTest, ChainingStrategiesDecide) {
  Configuration conf;
  // Downstream HEAD: starts a new chain.
  EXPECT_EQ(vertexNames(Linear(2, ChainingStrategy::kHead).build(conf)),
            (std::vector<std::string>{"Source: flights", "Calc -> Sink: print"}));
  // NEVER: chains with neither side.
  EXPECT_EQ(vertexNames(Linear(2, ChainingStrategy::kNever).build(conf)),
            (std::vector<std::string>{"Source: flights", "Calc", "Sink: print"}));
}

TEST(ChainingTest, DisabledChainingGivesOneVertexPerOperator) {
  Configuration conf;
  conf.set("pipeline.operator-chaining.enabled", "false");
  EXPECT_EQ(vertexNames(Linear().build(conf)), (std::vector<std::string>{"Source: flights", "Calc", "Sink: print"}));
}

TEST(ChainingTest, NonForwardPartitionerBreaksTheChain) {
  Configuration conf;
  Builder b;
  auto src = b.source("s", 2);
  auto sink = b.sink("Sink", b.partition(src, ShipStrategy::kRebalance), 2);
  JobGraph g = buildJobGraph({sink}, conf);
  EXPECT_EQ(vertexNames(g), (std::vector<std::string>{"Source: s", "Sink"}));
  EXPECT_EQ(g.edges[0].partitioner.strategy, ShipStrategy::kRebalance);
}

TEST(ChainingTest, SlotSharingGroupBreaksTheChain) {
  Configuration conf;
  Linear l;
  l.calc->slot_sharing_group = "other";
  l.sink->slot_sharing_group = "other";
  JobGraph g = l.build(conf);
  EXPECT_EQ(vertexNames(g), (std::vector<std::string>{"Source: flights", "Calc -> Sink: print"}));
  EXPECT_EQ(g.vertices[1].slot_sharing_group, "other");
}

TEST(ChainingTest, TwoInputEdgesBreakTheChain) {
  Configuration conf;
  Builder b;
  auto a = b.source("a", 1);
  auto c = b.source("c", 1);
  auto sink = b.sink("Sink", b.unite({a, c}), 1);
  JobGraph g = buildJobGraph({sink}, conf);
  EXPECT_EQ(vertexNames(g), (std::vector<std::string>{"Source: a", "Source: c", "Sink"}));
  ASSERT_EQ(g.vertices[2].inputs.size(), 2u);
  EXPECT_EQ(g.edges[static_cast<size_t>(g.vertices[2].inputs[0])].source_vertex, 0);
  EXPECT_EQ(g.edges[static_cast<size_t>(g.vertices[2].inputs[1])].source_vertex, 1);
}

TEST(ChainingTest, BatchExchangeIsNotChainable) {
  Configuration conf;
  Linear l;
  StreamGraph sg = StreamGraphGenerator(conf).generate({l.sink});
  EXPECT_TRUE(StreamingJobGraphGenerator::isChainable(sg, sg.edges[0]));
  sg.edges[0].exchange_mode = ExchangeMode::kBatch;
  EXPECT_FALSE(StreamingJobGraphGenerator::isChainable(sg, sg.edges[0]));
  EXPECT_EQ(vertexNames(StreamingJobGraphGenerator::createJobGraph(sg)),
            (std::vector<std::string>{"Source: flights", "Calc -> Sink: print"}));
}

TEST(ChainingTest, FanOutNames) {
  Configuration conf;
  Builder b;
  auto a = b.source("A", 1);
  auto x = b.op("B", {a}, 1);
  auto d = b.sink("D", x, 1);
  auto c = b.sink("C", a, 1);
  JobGraph g = buildJobGraph({d, c}, conf);
  ASSERT_EQ(g.vertices.size(), 1u);
  EXPECT_EQ(g.vertices[0].name, "Source: A -> (B -> D, C)");
  // Operators: parents before children, head first.
  const auto& ops = g.vertices[0].operators;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].name, "Source: A");
  EXPECT_EQ(ops[0].chained_outputs, (std::vector<int>{1, 3}));
  EXPECT_EQ(ops[1].name, "B");
  EXPECT_EQ(ops[1].chained_outputs, std::vector<int>{2});
}

TEST(JobGraphTest, VertexIdsAreDeterministicAndFollowUids) {
  Configuration conf;
  JobGraph g1 = Linear(3).build(conf);
  JobGraph g2 = Linear(3).build(conf);
  ASSERT_EQ(g1.vertices.size(), 2u);
  EXPECT_EQ(g1.vertices[0].id, g2.vertices[0].id);
  EXPECT_EQ(g1.vertices[1].id, g2.vertices[1].id);
  EXPECT_NE(g1.vertices[0].id, g1.vertices[1].id);
  EXPECT_EQ(g1.vertices[0].id.size(), 32u);
  EXPECT_EQ(g1.job_id, g2.job_id);
  Linear l(3);
  l.src->uid = "my-source";
  JobGraph g3 = l.build(conf);
  EXPECT_NE(g3.vertices[0].id, g1.vertices[0].id);
}

TEST(JobGraphTest, PointwiseConnections) {
  // 4 producers -> 2 consumers: producer i feeds consumer i*2/4.
  EXPECT_EQ(connectedConsumers(ShipStrategy::kRescale, 4, 2, 3), std::vector<int>{1});  // 6/4 = 1
  EXPECT_EQ(connectedProducers(ShipStrategy::kRescale, 4, 2, 0), (std::vector<int>{0, 1}));
  // 2 producers -> 4 consumers: consumer j reads producer j*2/4.
  EXPECT_EQ(connectedConsumers(ShipStrategy::kRescale, 2, 4, 1), (std::vector<int>{2, 3}));
  EXPECT_EQ(connectedProducers(ShipStrategy::kRescale, 2, 4, 3), std::vector<int>{1});  // 6/4 = 1
  EXPECT_EQ(connectedConsumers(ShipStrategy::kForward, 3, 3, 2), std::vector<int>{2});
  EXPECT_EQ(connectedConsumers(ShipStrategy::kHash, 2, 3, 0), (std::vector<int>{0, 1, 2}));
}

TEST(PlanTest, JsonHasFlinkShape) {
  Configuration conf;
  Builder b;
  auto src = b.source("flights", 2);
  auto calc = b.op("Calc", {src}, 2);
  auto agg = b.op("GroupAggregate", {b.partition(calc, ShipStrategy::kHash, {0})}, 3);
  auto sink = b.sink("Sink: print", agg, 3);
  JobGraph g = buildJobGraph({sink}, conf, "my job");
  const auto plan = nlohmann::json::parse(jobGraphToJson(g));
  EXPECT_EQ(plan["jid"], g.job_id);
  EXPECT_EQ(plan["name"], "my job");
  ASSERT_EQ(plan["nodes"].size(), 2u);
  const auto& n0 = plan["nodes"][0];
  EXPECT_EQ(n0["id"], g.vertices[0].id);
  EXPECT_EQ(n0["parallelism"], 2);
  EXPECT_EQ(n0["operator"], "Source: flights -> Calc");
  EXPECT_TRUE(n0.contains("operator_strategy"));
  EXPECT_TRUE(n0.contains("description"));
  EXPECT_FALSE(n0.contains("inputs"));
  const auto& n1 = plan["nodes"][1];
  EXPECT_EQ(n1["operator"], "GroupAggregate -> Sink: print");
  EXPECT_EQ(n1["parallelism"], 3);
  ASSERT_EQ(n1["inputs"].size(), 1u);
  EXPECT_EQ(n1["inputs"][0]["num"], 0);
  EXPECT_EQ(n1["inputs"][0]["id"], g.vertices[0].id);
  EXPECT_EQ(n1["inputs"][0]["ship_strategy"], "HASH");
  EXPECT_EQ(n1["inputs"][0]["exchange"], "pipelined_bounded");

  const std::string dot = jobGraphToDot(g);
  EXPECT_EQ(dot.rfind("digraph \"my job\" {", 0), 0u) << dot;
  EXPECT_NE(dot.find("v0 -> v1 [label=\"HASH\\npipelined_bounded\"];"), std::string::npos) << dot;

  const std::string text = jobGraphToText(g);
  EXPECT_NE(text.find("[1] Source: flights -> Calc  parallelism=2"), std::string::npos) << text;
  EXPECT_NE(text.find("<- [1] HASH[0] pipelined"), std::string::npos) << text;
}

}  // namespace
}  // namespace sluice::graph

// Region-by-region scheduling on the MiniCluster: BATCH jobs run in fewer slots than their STREAMING
// version, blocking results are complete before consumers start, and too few slots fail clearly.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::Collected;
using testing::KeyedSumLog;
using testing::makeTransformation;

// Counts source subtasks that reached the end of their input; records, when a downstream subtask opens,
// how many had.
struct Order {
  std::atomic<int> sources_ended{0};
  std::mutex mu;
  std::vector<int> ended_seen_at_open;
};

// Chained after the source: counts its subtask's end of input.
class EndCounter : public runtime::StreamOperator {
 public:
  explicit EndCounter(Order* o) : order_(o) {}
  void processBatch(types::RowBatch&& b) override { output_->collect(std::move(b)); }
  void endInput() override { order_->sources_ended.fetch_add(1); }

 private:
  Order* order_;
};

// KeyAndDoubleMap that notes, when it opens, how many source subtasks had ended.
class OpenProbeMap : public testing::KeyAndDoubleMap {
 public:
  explicit OpenProbeMap(Order* o) : order_(o) {}
  void open(const runtime::OperatorContext& ctx, runtime::Output* out) override {
    KeyAndDoubleMap::open(ctx, out);
    std::lock_guard<std::mutex> lock(order_->mu);
    order_->ended_seen_at_open.push_back(order_->sources_ended.load());
  }

 private:
  Order* order_;
};

struct Job {
  Order order;
  KeyedSumLog log;
  Collected collected;
  std::vector<graph::TransformationPtr> sinks;
};

graph::TransformationPtr rebalance(int id, graph::TransformationPtr in) {
  auto t = std::make_shared<graph::Transformation>();
  t->id = id;
  t->name = "Rebalance";
  t->kind = TransformationKind::kPartition;
  t->partitioner.strategy = graph::ShipStrategy::kRebalance;
  t->inputs = {std::move(in)};
  return t;
}

// Source(1..n) -> EndCounter | REBALANCE | Map (v % 5, 2v) | HASH(0) | KeyedSum -> Sink, parallelism 2
// everywhere: three vertices, three regions in BATCH. `groups` names the slot sharing groups of the three
// vertices' operators (empty: default).
void build(Job& j, int64_t n, const std::vector<std::string>& groups = {"", "", ""}) {
  Order* order = &j.order;
  auto src = makeTransformation(1, "numbers", TransformationKind::kSource, 2, runtime::makeOperatorFactory([n] {
                                  return std::make_unique<testing::NumberSource>(n, 50);
                                }, true));
  auto counter = makeTransformation(2, "EndCounter", TransformationKind::kOneInput, 2,
                                    runtime::makeOperatorFactory([order] { return std::make_unique<EndCounter>(order); }),
                                    {src});
  auto map = makeTransformation(4, "Map", TransformationKind::kOneInput, 2,
                                runtime::makeOperatorFactory([order] { return std::make_unique<OpenProbeMap>(order); }),
                                {rebalance(3, counter)});
  KeyedSumLog* log = &j.log;
  auto sum = makeTransformation(6, "KeyedSum", TransformationKind::kOneInput, 2,
                                runtime::makeOperatorFactory([log] { return std::make_unique<testing::KeyedSum>(log); }),
                                {testing::makeHashPartition(5, map, {0})});
  Collected* out = &j.collected;
  auto sink = makeTransformation(7, "Sink: collect", TransformationKind::kSink, 2,
                                 runtime::makeOperatorFactory([out] { return std::make_unique<testing::CollectSink>(out); }),
                                 {sum});
  src->slot_sharing_group = counter->slot_sharing_group = groups[0];
  map->slot_sharing_group = groups[1];
  sum->slot_sharing_group = sink->slot_sharing_group = groups[2];
  j.sinks = {sink};
}

// Sum of 2v over v in 1..1000 by v % 5 (see mini_cluster_test): 201000, 199400, 199800, 200200, 200600.
const std::vector<std::vector<int64_t>> kSums = {{0, 201000}, {1, 199400}, {2, 199800}, {3, 200200}, {4, 200600}};

std::vector<std::vector<int64_t>> sorted(const Collected& c) {
  auto rows = c.rows;
  std::sort(rows.begin(), rows.end());
  return rows;
}

Configuration config(const std::string& mode, int slots, const std::string& timeout = "") {
  Configuration c;
  c.set("execution.runtime-mode", mode);
  if (slots > 0) c.set("taskmanager.numberOfTaskSlots", std::to_string(slots));
  if (!timeout.empty()) c.set("slot.request.timeout", timeout);
  return c;
}

TEST(SchedulingTest, BatchJobWithThreeRegionsRunsOnTwoSlots) {
  Configuration conf = config("BATCH", 2);
  Job j;
  build(j, 1000);
  graph::JobGraph job = graph::buildJobGraph(j.sinks, conf, "batch");
  ASSERT_EQ(job.vertices.size(), 3u);
  ASSERT_EQ(job.regions.size(), 3u);
  JobExecutionResult r = MiniCluster(conf).execute(job, conf);
  EXPECT_EQ(sorted(j.collected), kSums);
  EXPECT_EQ(r.slots_configured, 2);
  EXPECT_EQ(r.slots_required, 2);  // one region of parallelism 2 at a time
  EXPECT_EQ(r.slots_peak, 2);
  EXPECT_EQ(r.deployed_regions, (std::vector<int>{0, 1, 2}));
  // Every Map subtask opened only after both source subtasks had ended: the blocking result was complete.
  EXPECT_EQ(j.order.ended_seen_at_open, (std::vector<int>{2, 2}));
}

TEST(SchedulingTest, BatchBlockingResultsAreNotBoundedByNetworkBuffers) {
  // One 256 b buffer per subpartition and one-row batches: a pipelined channel would block the source long
  // before its 1000 rows are written, and its consumer is not deployed until it finished; a blocking result
  // spills to files instead.
  Configuration conf = config("BATCH", 2);
  conf.set("taskmanager.memory.segment-size", "256b");
  conf.set("taskmanager.network.memory.max-buffers-per-channel", "1");
  conf.set("execution.buffer-timeout", "0 ms");
  Job j;
  build(j, 1000);
  graph::JobGraph job = graph::buildJobGraph(j.sinks, conf, "batch");
  MiniCluster(conf).execute(job, conf);
  EXPECT_EQ(sorted(j.collected), kSums);
}

TEST(SchedulingTest, StreamingVersionWithThreeGroupsNeedsSixSlots) {
  // Groups a, b, c of parallelism 2 all run at once: 2 + 2 + 2 = 6 slots.
  Configuration conf = config("STREAMING", 6);
  Job j;
  build(j, 1000, {"a", "b", "c"});
  graph::JobGraph job = graph::buildJobGraph(j.sinks, conf, "streaming");
  EXPECT_EQ(MiniCluster::requiredSlots(job), 6);
  JobExecutionResult r = MiniCluster(conf).execute(job, conf);
  EXPECT_EQ(sorted(j.collected), kSums);
  EXPECT_EQ(r.slots_peak, 6);
}

TEST(SchedulingTest, StreamingVersionOnTwoSlotsFailsAfterTheSlotRequestTimeout) {
  Configuration conf = config("STREAMING", 2, "100 ms");
  Job j;
  build(j, 1000, {"a", "b", "c"});
  graph::JobGraph job = graph::buildJobGraph(j.sinks, conf, "streaming");
  try {
    MiniCluster(conf).execute(job, conf);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("needs 6 slot(s)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the cluster has 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("after waiting 100 ms (slot.request.timeout)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Raise taskmanager.numberOfTaskSlots or local.number-taskmanager"), std::string::npos) << msg;
  }
  EXPECT_TRUE(j.collected.rows.empty());
}

TEST(SchedulingTest, BatchVersionWithThreeGroupsFitsInTwoSlots) {
  Configuration conf = config("BATCH", 2);
  Job j;
  build(j, 1000, {"a", "b", "c"});
  graph::JobGraph job = graph::buildJobGraph(j.sinks, conf, "batch");
  JobExecutionResult r = MiniCluster(conf).execute(job, conf);
  EXPECT_EQ(sorted(j.collected), kSums);
  EXPECT_EQ(r.slots_peak, 2);
}

TEST(SchedulingTest, SlotsAreSizedToTheJobWhenNotConfigured) {
  // No taskmanager.numberOfTaskSlots: 2 TaskManagers get ceil(6 / 2) = 3 slots each.
  Configuration conf = config("STREAMING", 0);
  conf.set("local.number-taskmanager", "2");
  Job j;
  build(j, 1000, {"a", "b", "c"});
  graph::JobGraph job = graph::buildJobGraph(j.sinks, conf, "sized");
  JobExecutionResult r = MiniCluster(conf).execute(job, conf);
  EXPECT_EQ(r.slots_configured, 6);
  EXPECT_EQ(sorted(j.collected), kSums);
}

TEST(SchedulingTest, StreamingDefaultGroupSharesSlotsAcrossVertices) {
  // One default group of parallelism 2: 3 vertices x 2 subtasks share 2 slots.
  Configuration conf = config("STREAMING", 2);
  Job j;
  build(j, 1000);
  graph::JobGraph job = graph::buildJobGraph(j.sinks, conf, "shared");
  JobExecutionResult r = MiniCluster(conf).execute(job, conf);
  EXPECT_EQ(r.slots_peak, 2);
  EXPECT_EQ(sorted(j.collected), kSums);
}

}  // namespace
}  // namespace sluice::cluster

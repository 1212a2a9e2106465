// Region failover (jobmanager.execution.failover-strategy): a job of two independent pipelines, a failure
// injected into one of them. With `region` only the failed pipeline's tasks restart (their attempt
// numbers and source starts say so, not timing) and the other keeps running; with `full` every task
// restarts. Both pipelines' sums must be exact either way; expected values come from a plain loop.

#include <gtest/gtest.h>

#include <map>

#include "cluster/mini_cluster.h"
#include "common/hash.h"
#include "graph/job_graph.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/operator_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"
#include "runtime/task/operator_chain.h"
#include "scheduler/execution_graph.h"
#include "checkpointed_operators.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::bigintRow;
using testing::CheckpointedKeyedSum;
using testing::CheckpointedNumberSource;
using testing::Collected;
using testing::expectedSums;
using testing::lastSumPerKey;
using testing::SourceStarts;
using testing::makeHashPartition;
using testing::makeTransformation;

struct PipelineProbe {
  Collected out;
  SourceStarts starts;
};

// Source "<tag>-numbers"(p) -> Map(v % 5, 2v) -HASH-> "Sum<tag>"(p) -> Sink(p=1); node ids from `id0`. With
// `sums_group` the sum and the sink are in that slot sharing group, so they take the slots after the
// sources' (on another TaskManager at p=1).
graph::TransformationPtr pipeline(const std::string& tag, int id0, int64_t n, PipelineProbe* probe, int p = 2,
                                  const std::string& sums_group = "", size_t batch = 10) {
  auto source = makeTransformation(id0, tag + "-numbers", TransformationKind::kSource, p,
                                   runtime::makeOperatorFactory([n, probe, batch] {
                                     return std::make_unique<CheckpointedNumberSource>(n, batch, &probe->starts);
                                   }, true));
  auto map = makeTransformation(id0 + 1, tag + "-Map", TransformationKind::kOneInput, p, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::KeyAndDoubleMap>();
                                }),
                                {source});
  auto hash = makeHashPartition(id0 + 2, map, {0});
  auto sum = makeTransformation(id0 + 3, "Sum" + tag, TransformationKind::kOneInput, p,
                                runtime::makeOperatorFactory([] { return std::make_unique<CheckpointedKeyedSum>(); }), {hash});
  auto sink = makeTransformation(id0 + 4, "Sink: " + tag, TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([probe] { return std::make_unique<testing::CollectSink>(&probe->out); }),
                                 {sum});
  sum->slot_sharing_group = sink->slot_sharing_group = sums_group;
  return sink;
}

// Attempt number of every subtask of the vertices whose name contains `tag`.
std::vector<int> attemptsOf(const JobExecutionResult& r, const std::string& tag) {
  std::vector<int> out;
  for (const VertexProgress& v : r.vertices) {
    if (v.name.find(tag) == std::string::npos) continue;
    for (const SubtaskProgress& s : v.subtasks) out.push_back(s.attempt);
  }
  return out;
}

struct Outcome {
  JobExecutionResult result;
  std::map<int64_t, int64_t> sums_a, sums_b;
  int starts_a = 0, starts_b = 0;
  int rows_b = 0;  // rows pipeline B's sink received, over all attempts
};

// Where the two pipelines run: TaskManagers, parallelism, state backend.
struct Layout {
  int task_managers = 1;
  int parallelism = 2;
  std::string backend = "hashmap";
  size_t source_batch = 10;  // values per source batch; each batch waits for a checkpoint
};

Outcome runTwoPipelines(const std::string& strategy, int64_t after_records, int attempts = 1, const Layout& layout = {}) {
  constexpr int64_t kNa = 200, kNb = 300;
  Configuration conf;
  conf.set("local.number-taskmanager", std::to_string(layout.task_managers));
  conf.set("state.backend.type", layout.backend);
  conf.set("execution.checkpointing.interval", "10 ms");
  conf.set("restart-strategy.type", "fixed-delay");
  conf.set("restart-strategy.fixed-delay.attempts", "3");
  conf.set("restart-strategy.fixed-delay.delay", "0 ms");
  if (!strategy.empty()) conf.set("jobmanager.execution.failover-strategy", strategy);
  conf.set("sluice.test.fail-operator", "SumA");
  conf.set("sluice.test.fail-subtask", std::to_string(layout.parallelism - 1));
  conf.set("sluice.test.fail-after-records", std::to_string(after_records));
  conf.set("sluice.test.fail-attempts", std::to_string(attempts));
  PipelineProbe a, b;
  const std::string sums_group = layout.task_managers > 1 ? "sums" : "";
  const graph::JobGraph job = graph::buildJobGraph({pipeline("A", 1, kNa, &a, layout.parallelism, sums_group, layout.source_batch),
                                                    pipeline("B", 11, kNb, &b, layout.parallelism, sums_group, layout.source_batch)},
                                                   conf, "two-pipelines");
  MiniCluster cluster(conf);
  Outcome o;
  o.result = cluster.execute(job, conf);
  o.sums_a = lastSumPerKey(a.out);
  o.sums_b = lastSumPerKey(b.out);
  o.starts_a = static_cast<int>(a.starts.starts.size());
  o.starts_b = static_cast<int>(b.starts.starts.size());
  EXPECT_EQ(o.sums_a, expectedSums(kNa));
  EXPECT_EQ(o.sums_b, expectedSums(kNb));
  o.rows_b = static_cast<int>(b.out.rows.size());
  return o;
}

TEST(RegionFailoverTest, TwoIndependentPipelinesAreTwoRegions) {
  Configuration conf;
  PipelineProbe a, b;
  const graph::JobGraph job = graph::buildJobGraph({pipeline("A", 1, 10, &a), pipeline("B", 11, 10, &b)}, conf, "j");
  EXPECT_EQ(scheduler::ExecutionGraph(job).regions().size(), 2u);
}

TEST(RegionFailoverTest, AFailureRestartsOnlyItsRegion) {
  for (int64_t after : {1, 7, 15, 31}) {
    SCOPED_TRACE(fmt::format("SumA (2/2) fails after {} records", after));
    const Outcome o = runTwoPipelines("", after);  // region is the default
    EXPECT_EQ(o.result.num_restarts, 1);
    // Pipeline A: 2 + 2 + 2 + 1 subtasks (source->map chained: 2, sum 2, sink 1), each in attempt 1.
    EXPECT_EQ(attemptsOf(o.result, "A"), std::vector<int>(5, 1));
    EXPECT_EQ(attemptsOf(o.result, "B"), std::vector<int>(5, 0));
    EXPECT_EQ(o.starts_a, 4);  // two source subtasks, twice
    EXPECT_EQ(o.starts_b, 2);  // never restarted
  }
}

TEST(RegionFailoverTest, EveryRegionRestartCountsInNumRestarts) {
  // Attempts 0 and 1 of SumA (2/2) fail: two region restarts, the third attempt finishes.
  const Outcome o = runTwoPipelines("region", 5, 2);
  EXPECT_EQ(o.result.num_restarts, 2);
  EXPECT_EQ(attemptsOf(o.result, "A"), std::vector<int>(5, 2));
  EXPECT_EQ(attemptsOf(o.result, "B"), std::vector<int>(5, 0));
  EXPECT_EQ(o.starts_a, 6);
  EXPECT_EQ(o.starts_b, 2);
}

TEST(RegionFailoverTest, FullStrategyRestartsEveryTask) {
  const Outcome o = runTwoPipelines("full", 7);
  EXPECT_EQ(o.result.num_restarts, 1);
  EXPECT_EQ(attemptsOf(o.result, "A"), std::vector<int>(5, 1));
  EXPECT_EQ(attemptsOf(o.result, "B"), std::vector<int>(5, 1));
  EXPECT_EQ(o.starts_a, 4);
  EXPECT_EQ(o.starts_b, 4);
}

TEST(RegionFailoverTest, MoreFailuresThanTheRestartStrategyAllowsFailTheJob) {
  Configuration conf;
  conf.set("execution.checkpointing.interval", "10 ms");
  conf.set("restart-strategy.type", "fixed-delay");
  conf.set("restart-strategy.fixed-delay.attempts", "1");
  conf.set("restart-strategy.fixed-delay.delay", "0 ms");
  conf.set("sluice.test.fail-operator", "SumA");
  conf.set("sluice.test.fail-after-records", "3");
  conf.set("sluice.test.fail-attempts", "5");
  PipelineProbe a, b;
  const graph::JobGraph job =
      graph::buildJobGraph({pipeline("A", 1, 200, &a), pipeline("B", 11, 200, &b)}, conf, "two-pipelines");
  MiniCluster cluster(conf);
  try {
    cluster.execute(job, conf);
    FAIL() << "the job finished although every attempt of SumA fails";
  } catch (const runtime::InjectedFailure& e) {
    EXPECT_NE(std::string(e.what()).find("SumA"), std::string::npos) << e.what();
  }
}

// Over two TaskManagers the pipelines' TCP channels share the connections between them: a region restart
// releases the failed pipeline's channels and partitions and requests new ones, while the other pipeline
// keeps reading over the same connections.
class RegionFailoverOverTaskManagersTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(RegionFailoverOverTaskManagersTest, AFailureAtAnyPointRestartsOnlyItsRegion) {
  const auto& [p, backend] = GetParam();
  // RocksDB checkpoints take longer: fewer, larger source batches wait for them.
  const Layout layout{2, p, backend, backend == "rocksdb" ? size_t{30} : size_t{10}};
  // The failing SumA subtask receives 40 records at least (each key has 40 of the values 1..200 and it
  // holds a key): 20 failure points below that on the heap, 10 on RocksDB (each run opens and restores
  // its databases, seconds per run).
  const int64_t step = backend == "rocksdb" ? 4 : 2;
  for (int64_t after = 1; after < 40; after += step) {
    SCOPED_TRACE(fmt::format("SumA ({}/{}) fails after {} records", p, p, after));
    const Outcome o = runTwoPipelines("region", after, 1, layout);
    EXPECT_EQ(o.result.task_managers, 2);
    EXPECT_GT(o.result.remote_channels, 0);
    EXPECT_EQ(o.result.num_restarts, 1);
    const std::vector<int> a = attemptsOf(o.result, "A"), b = attemptsOf(o.result, "B");
    ASSERT_FALSE(a.empty());
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(a, std::vector<int>(a.size(), 1));
    EXPECT_EQ(b, std::vector<int>(b.size(), 0));
    EXPECT_EQ(o.starts_a, 2 * p);  // every source subtask of A twice
    EXPECT_EQ(o.starts_b, p);      // B's once
    EXPECT_EQ(o.rows_b, 5);        // B's sink got its five sums once
    if (HasFailure()) break;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, RegionFailoverOverTaskManagersTest,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::Values("hashmap", "rocksdb")),
                         [](const auto& info) {
                           return fmt::format("p{}_{}", std::get<0>(info.param), std::get<1>(info.param));
                         });

TEST(RegionFailoverTest, RepeatedRegionRestartsOverTwoTaskManagers) {
  // Attempts 0 and 1 of SumA (2/2) fail: its partitions and channels are released and built twice.
  const Outcome o = runTwoPipelines("region", 5, 2, Layout{2, 2, "hashmap"});
  EXPECT_EQ(o.result.num_restarts, 2);
  EXPECT_EQ(attemptsOf(o.result, "A"), std::vector<int>(5, 2));
  EXPECT_EQ(attemptsOf(o.result, "B"), std::vector<int>(5, 0));
  EXPECT_EQ(o.starts_a, 6);
  EXPECT_EQ(o.starts_b, 2);
  EXPECT_EQ(o.rows_b, 5);
}

TEST(RegionFailoverTest, FullStrategyOverTwoTaskManagersRestartsEveryTask) {
  const Outcome o = runTwoPipelines("full", 7, 1, Layout{2, 2, "hashmap"});
  EXPECT_EQ(o.result.num_restarts, 1);
  EXPECT_EQ(attemptsOf(o.result, "A"), std::vector<int>(5, 1));
  EXPECT_EQ(attemptsOf(o.result, "B"), std::vector<int>(5, 1));
  EXPECT_EQ(o.starts_a, 4);
  EXPECT_EQ(o.starts_b, 4);
}

// BATCH: Source "numbers"(p) -REBALANCE-> "Map"(p) -HASH-> "KeyedSum" -> Sink(p), every exchange blocking, so
// each vertex is a region of its own (placed one after another on the TaskManagers). A failure in Map
// restarts Map, which reads the finished source's spill files again through buffers of its own
// TaskManager, and the region reading Map's result; never the source.
class BatchRegionFailoverTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(BatchRegionFailoverTest, AFailedVertexRereadsItsFinishedInputs) {
  const auto& [task_managers, p] = GetParam();
  static constexpr int64_t kN = 1000;
  // Map (p/p) receives kN / p records: 20 failure points below 440.
  for (int64_t after = 1; after < 440; after += 23) {
    SCOPED_TRACE(fmt::format("Map ({}/{}) fails after {} records on {} TaskManager(s)", p, p, after, task_managers));
    Configuration conf;
    conf.set("execution.runtime-mode", "BATCH");
    conf.set("local.number-taskmanager", std::to_string(task_managers));
    conf.set("restart-strategy.type", "fixed-delay");
    conf.set("restart-strategy.fixed-delay.attempts", "3");
    conf.set("restart-strategy.fixed-delay.delay", "0 ms");
    conf.set("sluice.test.fail-operator", "Map");
    conf.set("sluice.test.fail-subtask", std::to_string(p - 1));
    conf.set("sluice.test.fail-after-records", std::to_string(after));
    Collected out;
    testing::KeyedSumLog log;
    auto src = makeTransformation(1, "numbers", TransformationKind::kSource, p, runtime::makeOperatorFactory([] {
                                    return std::make_unique<testing::NumberSource>(kN, 50);
                                  }, true));
    auto rebalance = std::make_shared<graph::Transformation>();
    rebalance->id = 2;
    rebalance->name = "Rebalance";
    rebalance->kind = TransformationKind::kPartition;
    rebalance->partitioner.strategy = graph::ShipStrategy::kRebalance;
    rebalance->inputs = {src};
    auto map = makeTransformation(3, "Map", TransformationKind::kOneInput, p,
                                  runtime::makeOperatorFactory([] { return std::make_unique<testing::KeyAndDoubleMap>(); }),
                                  {rebalance});
    auto sum = makeTransformation(5, "KeyedSum", TransformationKind::kOneInput, p, runtime::makeOperatorFactory([&log] {
                                    return std::make_unique<testing::KeyedSum>(&log);
                                  }),
                                  {makeHashPartition(4, map, {0})});
    auto sink = makeTransformation(6, "Sink: collect", TransformationKind::kSink, p, runtime::makeOperatorFactory([&out] {
                                     return std::make_unique<testing::CollectSink>(&out);
                                   }),
                                   {sum});
    const graph::JobGraph job = graph::buildJobGraph({sink}, conf, "batch");
    MiniCluster cluster(conf);
    const JobExecutionResult r = cluster.execute(job, conf);
    EXPECT_EQ(r.num_restarts, 1);
    EXPECT_EQ(attemptsOf(r, "numbers"), std::vector<int>(static_cast<size_t>(p), 0));
    EXPECT_EQ(attemptsOf(r, "Map"), std::vector<int>(static_cast<size_t>(p), 1));
    EXPECT_EQ(attemptsOf(r, "KeyedSum"), std::vector<int>(static_cast<size_t>(p), 1));
    std::map<int64_t, int64_t> sums;
    for (const auto& row : out.rows) sums[row[0]] += row[1];
    EXPECT_EQ(sums, expectedSums(kN));
    EXPECT_EQ(out.rows.size(), 5u);  // the sums once: the sink's region ran once, after Map's restart
    if (HasFailure()) break;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, BatchRegionFailoverTest,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::Values(1, 2)), [](const auto& info) {
                           return fmt::format("tm{}_p{}", std::get<0>(info.param), std::get<1>(info.param));
                         });

TEST(RegionFailoverTest, AnUnknownStrategyIsAConfigError) {
  Configuration conf;
  EXPECT_THROW(conf.set("jobmanager.execution.failover-strategy", "some"), ConfigError);
}

}  // namespace
}  // namespace sluice::cluster

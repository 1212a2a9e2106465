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

// Source "<tag>-numbers"(p=2) -> Map(v % 5, 2v) -HASH-> "Sum<tag>"(p=2) -> Sink(p=1); node ids from `id0`.
graph::TransformationPtr pipeline(const std::string& tag, int id0, int64_t n, PipelineProbe* probe) {
  auto source = makeTransformation(id0, tag + "-numbers", TransformationKind::kSource, 2,
                                   runtime::makeOperatorFactory([n, probe] {
                                     return std::make_unique<CheckpointedNumberSource>(n, 10, &probe->starts);
                                   }, true));
  auto map = makeTransformation(id0 + 1, tag + "-Map", TransformationKind::kOneInput, 2, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::KeyAndDoubleMap>();
                                }),
                                {source});
  auto hash = makeHashPartition(id0 + 2, map, {0});
  auto sum = makeTransformation(id0 + 3, "Sum" + tag, TransformationKind::kOneInput, 2,
                                runtime::makeOperatorFactory([] { return std::make_unique<CheckpointedKeyedSum>(); }), {hash});
  return makeTransformation(id0 + 4, "Sink: " + tag, TransformationKind::kSink, 1,
                            runtime::makeOperatorFactory([probe] { return std::make_unique<testing::CollectSink>(&probe->out); }),
                            {sum});
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
};

Outcome runTwoPipelines(const std::string& strategy, int64_t after_records, int attempts = 1) {
  constexpr int64_t kNa = 200, kNb = 300;
  Configuration conf;
  conf.set("execution.checkpointing.interval", "10 ms");
  conf.set("restart-strategy.type", "fixed-delay");
  conf.set("restart-strategy.fixed-delay.attempts", "3");
  conf.set("restart-strategy.fixed-delay.delay", "0 ms");
  if (!strategy.empty()) conf.set("jobmanager.execution.failover-strategy", strategy);
  conf.set("sluice.test.fail-operator", "SumA");
  conf.set("sluice.test.fail-subtask", "1");
  conf.set("sluice.test.fail-after-records", std::to_string(after_records));
  conf.set("sluice.test.fail-attempts", std::to_string(attempts));
  PipelineProbe a, b;
  const graph::JobGraph job =
      graph::buildJobGraph({pipeline("A", 1, kNa, &a), pipeline("B", 11, kNb, &b)}, conf, "two-pipelines");
  MiniCluster cluster(conf);
  Outcome o;
  o.result = cluster.execute(job, conf);
  o.sums_a = lastSumPerKey(a.out);
  o.sums_b = lastSumPerKey(b.out);
  o.starts_a = static_cast<int>(a.starts.starts.size());
  o.starts_b = static_cast<int>(b.starts.starts.size());
  EXPECT_EQ(o.sums_a, expectedSums(kNa));
  EXPECT_EQ(o.sums_b, expectedSums(kNb));
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

TEST(RegionFailoverTest, AnUnknownStrategyIsAConfigError) {
  Configuration conf;
  EXPECT_THROW(conf.set("jobmanager.execution.failover-strategy", "some"), ConfigError);
}

}  // namespace
}  // namespace sluice::cluster

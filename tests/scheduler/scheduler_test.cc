// PipelinedRegionScheduler and ExecutionGraph: region-by-region deployment, slot sharing and slot
// request timeouts, driven by hand (no threads).

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "graph/job_graph.h"
#include "scheduler/execution_graph.h"
#include "scheduler/region_scheduler.h"

namespace sluice::scheduler {
namespace {

using graph::ChainingStrategy;
using graph::ExchangeMode;
using graph::ShipStrategy;
using graph::Transformation;
using graph::TransformationKind;
using graph::TransformationPtr;

class TestFactory : public graph::OperatorFactory {
 public:
  explicit TestFactory(bool source) : source_(source) {}
  bool isSource() const override { return source_; }
  ChainingStrategy chainingStrategy() const override {
    return source_ ? ChainingStrategy::kHead : ChainingStrategy::kAlways;
  }

 private:
  bool source_;
};

class Builder {
 public:
  TransformationPtr source(const std::string& name, int p) {
    return add(name, TransformationKind::kSource, p, {}, true);
  }
  TransformationPtr op(const std::string& name, std::vector<TransformationPtr> in, int p,
                       const std::string& group = "") {
    auto t = add(name, TransformationKind::kOneInput, p, std::move(in), false);
    t->slot_sharing_group = group;
    return t;
  }
  TransformationPtr partition(TransformationPtr in, ShipStrategy s, ExchangeMode mode = ExchangeMode::kUndefined) {
    auto t = add("Partition", TransformationKind::kPartition, -1, {std::move(in)}, false);
    t->factory = nullptr;
    t->partitioner.strategy = s;
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
    t->factory = std::make_shared<TestFactory>(source);
    return t;
  }
  int next_id_ = 0;
};

// Source A (p=2) -REBALANCE-> B (p=2) -REBALANCE-> C (p=2), in `mode`, with optional named groups.
graph::JobGraph chainOfThree(const std::string& mode, const std::string& group_b = "",
                             const std::string& group_c = "") {
  Configuration conf;
  conf.set("execution.runtime-mode", mode);
  Builder b;
  auto a = b.source("A", 2);
  auto bb = b.op("B", {b.partition(a, ShipStrategy::kRebalance)}, 2, group_b);
  auto c = b.op("C", {b.partition(bb, ShipStrategy::kRebalance)}, 2, group_c);
  return graph::buildJobGraph({c}, conf, "abc");
}

SlotPoolSettings slots(int n, int timeout_ms = 1000) {
  SlotPoolSettings s;
  s.slots_per_task_manager = n;
  s.slot_request_timeout = std::chrono::milliseconds(timeout_ms);
  return s;
}

TEST(ExecutionGraphTest, StreamingJobIsOneRegionNeedingTheLargestParallelism) {
  graph::JobGraph job = chainOfThree("STREAMING");
  ExecutionGraph eg(job);
  ASSERT_EQ(eg.executions().size(), 6u);  // 3 vertices x 2 subtasks
  ASSERT_EQ(eg.regions().size(), 1u);
  EXPECT_TRUE(eg.regions()[0].blocking_inputs.empty());
  // One "default" group with parallelism 2 everywhere: shared slots (default, 0) and (default, 1).
  EXPECT_EQ(eg.sharedSlots().size(), 2u);
  EXPECT_EQ(eg.minimumRequiredSlots(), 2);
}

TEST(ExecutionGraphTest, StreamingWithThreeNamedGroupsNeedsEachGroupsSlots) {
  graph::JobGraph job = chainOfThree("STREAMING", "b", "c");
  ExecutionGraph eg(job);
  // Groups default (A), b (B), c (C), each 2 subtasks: 2 + 2 + 2 = 6.
  EXPECT_EQ(eg.minimumRequiredSlots(), 6);
}

TEST(ExecutionGraphTest, BatchJobHasOneRegionPerVertexAndNeedsOneRegionsSlots) {
  graph::JobGraph job = chainOfThree("BATCH");
  ExecutionGraph eg(job);
  ASSERT_EQ(eg.regions().size(), 3u);
  EXPECT_EQ(eg.regions()[0].blocking_inputs.size(), 0u);
  EXPECT_EQ(eg.regions()[1].blocking_inputs, std::vector<int>{0});
  EXPECT_EQ(eg.regions()[2].blocking_inputs, std::vector<int>{1});
  // Groups default-region-0/1/2 with 2 slots each, but one region at a time: max(2, 2, 2) = 2.
  EXPECT_EQ(eg.sharedSlots().size(), 6u);
  EXPECT_EQ(eg.minimumRequiredSlots(), 2);
}

TEST(RegionSchedulerTest, BatchRegionsRunOneAfterAnotherInTwoSlots) {
  graph::JobGraph job = chainOfThree("BATCH");
  ExecutionGraph eg(job);
  PipelinedRegionScheduler s(eg, slots(2));
  const auto t0 = Clock::now();
  // Executions are vertex-major: A = {0, 1}, B = {2, 3}, C = {4, 5}.
  EXPECT_EQ(s.start(t0), (std::vector<int>{0, 1}));
  EXPECT_EQ(s.slotPool().inUse(), 2);
  // B's blocking input is produced only when both A subtasks finished.
  EXPECT_TRUE(s.onExecutionFinished(0, t0).empty());
  EXPECT_EQ(s.slotPool().inUse(), 1);
  EXPECT_EQ(s.onExecutionFinished(1, t0), (std::vector<int>{2, 3}));
  EXPECT_TRUE(s.onExecutionFinished(3, t0).empty());
  EXPECT_EQ(s.onExecutionFinished(2, t0), (std::vector<int>{4, 5}));
  EXPECT_FALSE(s.isFinished());
  EXPECT_TRUE(s.onExecutionFinished(4, t0).empty());
  EXPECT_TRUE(s.onExecutionFinished(5, t0).empty());
  EXPECT_TRUE(s.isFinished());
  EXPECT_EQ(s.slotPool().peakInUse(), 2);
  EXPECT_EQ(s.slotPool().inUse(), 0);
  EXPECT_EQ(s.deployedRegions(), (std::vector<int>{0, 1, 2}));
}

TEST(RegionSchedulerTest, StreamingDeploysEverythingAtOnce) {
  graph::JobGraph job = chainOfThree("STREAMING");
  ExecutionGraph eg(job);
  PipelinedRegionScheduler s(eg, slots(2));
  EXPECT_EQ(s.start(Clock::now()), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // Subtask i of A, B and C share slot i.
  EXPECT_EQ(s.slotPool().inUse(), 2);
}

TEST(RegionSchedulerTest, TooFewSlotsTimesOutWithRequiredAndAvailableCounts) {
  graph::JobGraph job = chainOfThree("STREAMING", "b", "c");
  ExecutionGraph eg(job);
  PipelinedRegionScheduler s(eg, slots(2, 50));
  const auto t0 = Clock::now();
  EXPECT_TRUE(s.start(t0).empty());
  ASSERT_TRUE(s.nextTimeout().has_value());
  EXPECT_EQ(*s.nextTimeout(), t0 + std::chrono::milliseconds(50));
  EXPECT_NO_THROW(s.checkSlotRequestTimeouts(t0 + std::chrono::milliseconds(49)));
  try {
    s.checkSlotRequestTimeouts(t0 + std::chrono::milliseconds(50));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    // 3 groups x 2 subtasks = 6 slots needed; the pool has 2, all free.
    EXPECT_NE(msg.find("needs 6 slot(s)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("only 2 of the cluster's 2 slot(s)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("slot.request.timeout"), std::string::npos) << msg;
    EXPECT_NE(msg.find("taskmanager.numberOfTaskSlots"), std::string::npos) << msg;
    EXPECT_NE(msg.find("local.number-taskmanager"), std::string::npos) << msg;
  }
}

TEST(RegionSchedulerTest, BatchWithNamedGroupsFitsInOneGroupsSlots) {
  // The same three named groups in BATCH: regions run one after another, so 2 slots suffice.
  graph::JobGraph job = chainOfThree("BATCH", "b", "c");
  ExecutionGraph eg(job);
  EXPECT_EQ(eg.minimumRequiredSlots(), 2);
  PipelinedRegionScheduler s(eg, slots(2));
  const auto t = Clock::now();
  EXPECT_EQ(s.start(t).size(), 2u);
  s.onExecutionFinished(0, t);
  EXPECT_EQ(s.onExecutionFinished(1, t).size(), 2u);
  s.onExecutionFinished(2, t);
  EXPECT_EQ(s.onExecutionFinished(3, t).size(), 2u);
  EXPECT_EQ(s.slotPool().peakInUse(), 2);
}

TEST(RegionSchedulerTest, RegionsDependingOnEachOtherInACycleAreMerged) {
  // A -FORWARD pipelined-> B, A -REBALANCE blocking-> C -REBALANCE blocking-> B: logical regions {A, B}
  // and {C} each wait for the other, so they form one scheduling region (FLINK-17330).
  Configuration conf;
  Builder b;
  auto a = b.source("A", 2);
  auto c = b.op("C", {b.partition(a, ShipStrategy::kRebalance, ExchangeMode::kBatch)}, 2);
  auto bb = b.op("B", {a, b.partition(c, ShipStrategy::kRebalance, ExchangeMode::kBatch)}, 2);
  graph::JobGraph job = graph::buildJobGraph({bb}, conf, "cycle");
  ASSERT_EQ(job.regions.size(), 2u);
  ExecutionGraph eg(job);
  ASSERT_EQ(eg.regions().size(), 1u);
  EXPECT_EQ(eg.regions()[0].logical_regions, (std::vector<int>{0, 1}));
  PipelinedRegionScheduler s(eg, slots(2));
  EXPECT_EQ(s.start(Clock::now()).size(), 6u);
}

}  // namespace
}  // namespace sluice::scheduler

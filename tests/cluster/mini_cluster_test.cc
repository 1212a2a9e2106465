#include "cluster/mini_cluster.h"

#include <gtest/gtest.h>

#include <regex>

#include <algorithm>

#include "common/hash.h"
#include "graph/job_graph.h"
#include "runtime/network/record_writer.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::Collected;
using testing::KeyedSumLog;
using testing::makeHashPartition;
using testing::makeTransformation;

struct Pipeline {
  KeyedSumLog log;
  Collected collected;
  std::vector<graph::TransformationPtr> sinks;
};

// Source(p=2, 1..n) -> Map(p=2, chained) -HASH(0)-> KeyedSum(p=3) -> Sink(p=1, REBALANCE).
void buildKeyedSum(Pipeline& p, int64_t n, size_t batch, int64_t fail_at = 0, int64_t sink_fail_after = -1) {
  auto source = makeTransformation(1, "numbers", TransformationKind::kSource, 2,
                                   runtime::makeOperatorFactory([n, batch] {
                                     return std::make_unique<testing::NumberSource>(n, batch);
                                   }, true));
  auto map = makeTransformation(2, "Map", TransformationKind::kOneInput, 2, runtime::makeOperatorFactory([fail_at] {
                                  return std::make_unique<testing::KeyAndDoubleMap>(fail_at);
                                }),
                                {source});
  auto hash = makeHashPartition(3, map, {0});
  KeyedSumLog* log = &p.log;
  auto sum = makeTransformation(4, "KeyedSum", TransformationKind::kOneInput, 3,
                                runtime::makeOperatorFactory([log] { return std::make_unique<testing::KeyedSum>(log); }),
                                {hash});
  Collected* out = &p.collected;
  auto sink = makeTransformation(5, "Sink: collect", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([out, sink_fail_after] {
                                   return std::make_unique<testing::CollectSink>(out, sink_fail_after);
                                 }),
                                 {sum});
  p.sinks = {sink};
}

TEST(MiniClusterTest, KeyedSumAtParallelismThreeMatchesHandComputedSums) {
  Configuration conf;
  conf.set("sluice.batch.size", "64");
  Pipeline p;
  buildKeyedSum(p, 1000, 37);
  graph::JobGraph job = graph::buildJobGraph(p.sinks, conf, "keyed-sum");
  ASSERT_EQ(job.vertices.size(), 3u);  // Source -> Map | KeyedSum | Sink
  EXPECT_EQ(job.vertices[0].name, "Source: numbers -> Map");

  MiniCluster cluster(conf);
  JobExecutionResult result = cluster.execute(job, conf);
  EXPECT_EQ(result.status, JobStatus::kFinished);

  // Sum of 2v over v in 1..1000 with v % 5 == k:
  //   k=0: v = 5,10..1000 (200 values): 5 * (200*201/2) = 100500 -> 201000
  //   k=1: v = 1,6..996: 200*1 + 5 * (199*200/2) = 200 + 99500 = 99700 -> 199400
  //   k=2: 400 + 99500 = 99900 -> 199800
  //   k=3: 600 + 99500 = 100100 -> 200200
  //   k=4: 800 + 99500 = 100300 -> 200600
  // (total 1001000 = 1000 * 1001, the sum of 2v over 1..1000)
  std::vector<std::vector<int64_t>> rows = p.collected.rows;
  std::sort(rows.begin(), rows.end());
  const std::vector<std::vector<int64_t>> expected = {
      {0, 201000}, {1, 199400}, {2, 199800}, {3, 200200}, {4, 200600}};
  EXPECT_EQ(rows, expected);
  EXPECT_TRUE(p.collected.ended);

  // Every key was processed by exactly the subtask its key group maps to (max parallelism 128, derived
  // from parallelism 3: roundUpToPowerOfTwo(3 + 1) = 4, raised to the lower bound 128).
  ASSERT_EQ(job.vertices[1].max_parallelism, 128);
  for (int64_t k = 0; k < 5; ++k) {
    types::RowBatch b(testing::bigintRow(1));
    b.column(0).appendLong(k);
    b.kinds().push_back(types::RowKind::kInsert);
    const int32_t kg = assignToKeyGroup(runtime::hashKey(b, 0, {0}), 128);
    const int32_t subtask = operatorIndexForKeyGroup(128, 3, kg);
    EXPECT_EQ(p.log.subtasks_of_key[k], std::vector<int>{subtask}) << "key " << k;
  }
  // The final watermark reached every keyed subtask.
  for (int s = 0; s < 3; ++s) EXPECT_EQ(p.log.max_watermark_per_subtask[static_cast<size_t>(s)], runtime::Watermark::kMaxTimestamp);

  // Metrics: the source vertex read nothing from the network and wrote 1000 rows; KeyedSum read 1000 rows
  // and wrote 5 (one per key); the sink read 5.
  ASSERT_EQ(result.vertices.size(), 3u);
  EXPECT_EQ(result.vertices[0].records_out, 1000);
  EXPECT_EQ(result.vertices[1].records_in, 1000);
  EXPECT_EQ(result.vertices[1].records_out, 5);
  EXPECT_EQ(result.vertices[2].records_in, 5);
  EXPECT_EQ(result.slots_required, 3);
}

TEST(MiniClusterTest, BackpressureWithChannelCapacityOneDeliversEveryRow) {
  Configuration conf;
  conf.set("taskmanager.memory.segment-size", "256b");
  conf.set("taskmanager.network.memory.max-buffers-per-channel", "1");
  conf.set("sluice.batch.size", "1");
  conf.set("execution.buffer-timeout", "0 ms");
  Pipeline p;
  buildKeyedSum(p, 3000, 1);
  graph::JobGraph job = graph::buildJobGraph(p.sinks, conf);
  MiniCluster cluster(conf);
  cluster.execute(job, conf);
  int64_t total = 0;
  for (const auto& r : p.collected.rows) total += r[1];
  // Sum of 2v over 1..3000 = 3000 * 3001 = 9003000.
  EXPECT_EQ(total, 9003000);
}

TEST(MiniClusterTest, FailingOperatorFailsTheJobWithItsMessage) {
  Configuration conf;
  conf.set("taskmanager.memory.segment-size", "256b");
  conf.set("taskmanager.network.memory.max-buffers-per-channel", "1");
  Pipeline p;
  // Infinite source; the map throws on value 500, while the other source subtask may be blocked on a full
  // channel: the job must still end.
  buildKeyedSum(p, -1, 10, 500);
  graph::JobGraph job = graph::buildJobGraph(p.sinks, conf);
  MiniCluster cluster(conf);
  try {
    cluster.execute(job, conf);
    FAIL() << "the job should fail";
  } catch (const UserError& e) {
    // The job (name and id), then the subtask that failed (Flink's task name "<chain> (i/n)"), then the
    // operator's own message.
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(fmt::format("Job '{}' (", job.name), 0), 0u) << m;
    EXPECT_TRUE(std::regex_match(m, std::regex(R"(Job '.*' \([0-9a-f]{32}\) failed: .*Map.* \([0-9]+/[0-9]+\) failed: )"
                                               R"(bad value 500 at test\.csv:7)")))
        << m;
  }
}

TEST(MiniClusterTest, FailingSinkReleasesBlockedProducers) {
  Configuration conf;
  conf.set("taskmanager.memory.segment-size", "256b");
  conf.set("taskmanager.network.memory.max-buffers-per-channel", "1");
  conf.set("execution.buffer-timeout", "0 ms");
  Pipeline p;
  buildKeyedSum(p, -1, 10);
  // Replace the sink: a consumer that dies after its first batch while the keyed sum never ends.
  Collected* out = &p.collected;
  auto& sink = p.sinks[0];
  sink->factory = runtime::makeOperatorFactory([out] { return std::make_unique<testing::CollectSink>(out, 0); });
  // KeyedSum only emits at endInput, so feed the sink from the map directly instead.
  sink->inputs = {sink->inputs[0]->inputs[0]->inputs[0]};
  sink->parallelism = 2;
  graph::JobGraph job = graph::buildJobGraph(p.sinks, conf);
  MiniCluster cluster(conf);
  EXPECT_THROW(cluster.execute(job, conf), std::runtime_error);
}

TEST(MiniClusterTest, CancelStopsAnInfiniteJob) {
  Configuration conf;
  conf.set("taskmanager.memory.segment-size", "256b");
  conf.set("taskmanager.network.memory.max-buffers-per-channel", "2");
  Pipeline p;
  buildKeyedSum(p, -1, 16);
  // Source -> Map -> sink directly so the sink sees data while the job runs.
  Collected* out = &p.collected;
  auto& sink = p.sinks[0];
  sink->factory = runtime::makeOperatorFactory([out] { return std::make_unique<testing::CollectSink>(out); });
  sink->inputs = {sink->inputs[0]->inputs[0]->inputs[0]};
  graph::JobGraph job = graph::buildJobGraph(p.sinks, conf);
  MiniCluster cluster(conf);
  std::atomic<int> progress_calls{0};
  SubmitOptions options;
  options.progress_interval = std::chrono::milliseconds(1);
  options.on_progress = [&](const JobProgress&) { progress_calls.fetch_add(1); };
  auto handle = cluster.start(job, conf, options);
  p.collected.waitForBatches(3);
  EXPECT_FALSE(handle->isDone());
  handle->cancel();
  JobExecutionResult r = handle->wait();
  EXPECT_EQ(r.status, JobStatus::kCanceled);
  EXPECT_FALSE(p.collected.ended);  // cancelled tasks do not run endInput
  EXPECT_GT(r.vertices[0].records_out, 0);
}

TEST(MiniClusterTest, FanOutInsideAChainFeedsBothBranches) {
  Configuration conf;
  Collected left, right;
  auto source = makeTransformation(1, "numbers", TransformationKind::kSource, 2, runtime::makeOperatorFactory([] {
                                     return std::make_unique<testing::NumberSource>(100, 7);
                                   }, true));
  auto map = makeTransformation(2, "Map", TransformationKind::kOneInput, 2, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::KeyAndDoubleMap>();
                                }),
                                {source});
  Collected* l = &left;
  Collected* r = &right;
  auto sink_a = makeTransformation(3, "Sink: a", TransformationKind::kSink, 2, runtime::makeOperatorFactory([l] {
                                     return std::make_unique<testing::CollectSink>(l);
                                   }),
                                   {map});
  auto sink_b = makeTransformation(4, "Sink: b", TransformationKind::kSink, 2, runtime::makeOperatorFactory([r] {
                                     return std::make_unique<testing::CollectSink>(r);
                                   }),
                                   {map});
  graph::JobGraph job = graph::buildJobGraph({sink_a, sink_b}, conf);
  ASSERT_EQ(job.vertices.size(), 1u);
  EXPECT_EQ(job.vertices[0].name, "Source: numbers -> Map -> (Sink: a, Sink: b)");
  JobExecutionResult result = MiniCluster(conf).execute(job, conf);
  // Both sinks see all 100 rows; sum of 2v over 1..100 = 100 * 101 = 10100.
  for (Collected* c : {l, r}) {
    ASSERT_EQ(c->rows.size(), 100u);
    int64_t sum = 0;
    for (const auto& row : c->rows) sum += row[1];
    EXPECT_EQ(sum, 10100);
  }
  // Map read 100 and wrote 100 once (not once per branch).
  ASSERT_EQ(result.vertices[0].operators.size(), 4u);
  EXPECT_EQ(result.vertices[0].operators[1].records_in, 100);
  EXPECT_EQ(result.vertices[0].operators[1].records_out, 100);
  EXPECT_EQ(result.vertices[0].records_out, 0);  // nothing crossed the network
}

TEST(MiniClusterTest, UnionOfTwoSourcesWithDifferentParallelism) {
  Configuration conf;
  Collected out;
  auto a = makeTransformation(1, "a", TransformationKind::kSource, 3, runtime::makeOperatorFactory([] {
                                return std::make_unique<testing::NumberSource>(30, 4);
                              }, true));
  auto b = makeTransformation(2, "b", TransformationKind::kSource, 1, runtime::makeOperatorFactory([] {
                                return std::make_unique<testing::NumberSource>(10, 3);
                              }, true));
  auto u = std::make_shared<graph::Transformation>();
  u->id = 3;
  u->kind = TransformationKind::kUnion;
  u->inputs = {a, b};
  Collected* o = &out;
  auto sink = makeTransformation(4, "Sink", TransformationKind::kSink, 2, runtime::makeOperatorFactory([o] {
                                   return std::make_unique<testing::CollectSink>(o);
                                 }),
                                 {u});
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  ASSERT_EQ(job.vertices.size(), 3u);
  MiniCluster(conf).execute(job, conf);
  // 1..30 once (split over 3 subtasks) and 1..10 once: 30*31/2 + 10*11/2 = 465 + 55 = 520.
  int64_t sum = 0;
  for (const auto& row : out.rows) sum += row[0];
  EXPECT_EQ(out.rows.size(), 40u);
  EXPECT_EQ(sum, 520);
}

TEST(MiniClusterTest, BufferTimeoutFlushesAnIdlePipeline) {
  Configuration conf;
  conf.set("execution.buffer-timeout", "5 ms");
  Collected out;
  auto source = makeTransformation(1, "trickle", TransformationKind::kSource, 1, runtime::makeOperatorFactory([] {
                                     return std::make_unique<testing::TrickleSource>(3);
                                   }, true));
  // Map at parallelism 2 behind a REBALANCE; its output coalesces and only the timer can flush it, since
  // neither the source nor the map ever ends.
  auto map = makeTransformation(2, "Map", TransformationKind::kOneInput, 2, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::IdentityMap>();
                                }),
                                {source});
  auto rescale = std::make_shared<graph::Transformation>();
  rescale->id = 3;
  rescale->kind = TransformationKind::kPartition;
  rescale->partitioner.strategy = graph::ShipStrategy::kRebalance;
  rescale->inputs = {map};
  Collected* o = &out;
  auto sink = makeTransformation(4, "Sink", TransformationKind::kSink, 1, runtime::makeOperatorFactory([o] {
                                   return std::make_unique<testing::CollectSink>(o);
                                 }),
                                 {rescale});
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  ASSERT_EQ(job.vertices.size(), 3u);
  auto handle = MiniCluster(conf).start(job, conf);
  {
    std::unique_lock<std::mutex> lock(out.mu);
    out.cv.wait(lock, [&] { return out.rows.size() >= 3; });
  }
  handle->cancel();
  EXPECT_EQ(handle->wait().status, JobStatus::kCanceled);
  EXPECT_EQ(out.rows.size(), 3u);
}

TEST(MiniClusterTest, ProgressCallbackReportsRunningCounts) {
  Configuration conf;
  Pipeline p;
  buildKeyedSum(p, -1, 16);
  graph::JobGraph job = graph::buildJobGraph(p.sinks, conf);
  std::mutex mu;
  std::condition_variable cv;
  int64_t seen_out = 0;
  SubmitOptions options;
  options.progress_interval = std::chrono::milliseconds(1);
  options.on_progress = [&](const JobProgress& progress) {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(progress.vertices.size(), 3u);
    seen_out = std::max(seen_out, progress.vertices[0].records_out);
    cv.notify_all();
  };
  auto handle = MiniCluster(conf).start(job, conf, options);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return seen_out > 0; });
  }
  handle->cancel();
  JobExecutionResult r = handle->wait();
  EXPECT_EQ(r.status, JobStatus::kCanceled);
  EXPECT_GE(r.vertices[0].records_out, seen_out);
}

TEST(MiniClusterTest, RescaleConnectsSubtasksPointwise) {
  Configuration conf;
  Collected out;
  auto source = makeTransformation(1, "numbers", TransformationKind::kSource, 4, runtime::makeOperatorFactory([] {
                                     return std::make_unique<testing::NumberSource>(40, 3);
                                   }, true));
  auto rescale = std::make_shared<graph::Transformation>();
  rescale->id = 2;
  rescale->kind = TransformationKind::kPartition;
  rescale->partitioner.strategy = graph::ShipStrategy::kRescale;
  rescale->inputs = {source};
  Collected* o = &out;
  auto sink = makeTransformation(3, "Sink", TransformationKind::kSink, 2, runtime::makeOperatorFactory([o] {
                                   return std::make_unique<testing::CollectSink>(o);
                                 }),
                                 {rescale});
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  MiniCluster(conf).execute(job, conf);
  ASSERT_EQ(out.rows.size(), 40u);
  // Source subtask i emits v with (v - 1) % 4 == i; 4 producers -> 2 consumers pointwise: producer i feeds
  // consumer i * 2 / 4, so consumer 0 gets subtasks {0, 1} and consumer 1 gets {2, 3}.
  for (size_t r = 0; r < out.rows.size(); ++r) {
    const int producer = static_cast<int>((out.rows[r][0] - 1) % 4);
    EXPECT_EQ(out.subtask_of_row[r], producer * 2 / 4) << "value " << out.rows[r][0];
  }
}

TEST(MiniClusterTest, FinalWatermarkIsNotRepeatedWhenTheSourceSentIt) {
  Configuration conf;
  std::atomic<int> chained{0}, remote{0};
  auto source = makeTransformation(1, "self", TransformationKind::kSource, 1, runtime::makeOperatorFactory([] {
                                     return std::make_unique<testing::SelfFinishingSource>();
                                   }, true));
  std::atomic<int>* c = &chained;
  std::atomic<int>* r = &remote;
  auto counter = makeTransformation(2, "Count", TransformationKind::kOneInput, 1, runtime::makeOperatorFactory([c] {
                                      return std::make_unique<testing::WatermarkCounter>(c);
                                    }),
                                    {source});
  auto sink = makeTransformation(3, "Count2", TransformationKind::kSink, 2, runtime::makeOperatorFactory([r] {
                                   return std::make_unique<testing::WatermarkCounter>(r);
                                 }),
                                 {counter});
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  ASSERT_EQ(job.vertices.size(), 2u);
  MiniCluster(conf).execute(job, conf);
  EXPECT_EQ(chained.load(), 1);  // the source's own MAX watermark only
  EXPECT_EQ(remote.load(), 2);   // one per downstream subtask
}

TEST(MiniClusterTest, RequiredSlotsIsTheMaxParallelismPerSlotSharingGroup) {
  graph::JobGraph job;
  job.vertices.resize(3);
  job.vertices[0].parallelism = 2;
  job.vertices[1].parallelism = 4;
  job.vertices[2].parallelism = 3;
  job.vertices[2].slot_sharing_group = "other";
  // "default": max(2, 4) = 4; "other": 3; total 7.
  EXPECT_EQ(MiniCluster::requiredSlots(job), 7);
}

}  // namespace
}  // namespace sluice::cluster

// Task IO metrics (busy / idle / back-pressured time, records, pool usage) and backpressure: a fast source
// in front of a sink throttled to 1,000 rows/s.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "cluster/job_metrics.h"
#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "progress_wait.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::Collected;
using testing::makeTransformation;
using testing::waitForProgress;

TEST(IoMetricsTest, RatesOverTheRunningTimeAndOverAWindow) {
  SubtaskProgress s;
  s.io.running_time_ms = 2000;
  s.io.idle_time_ms = 500;
  s.io.back_pressured_time_ms = 300;
  s.io.busy_time_ms = 1200;
  s.io.num_records_in = 4000;
  s.io.num_bytes_out = 10000;
  computeRates(s, nullptr);
  // Over the whole 2 s: 250 ms/s idle, 150 ms/s back pressured, the rest busy; 2000 records/s, 5000 B/s.
  EXPECT_DOUBLE_EQ(s.idle_time_ms_per_second, 250);
  EXPECT_DOUBLE_EQ(s.back_pressured_time_ms_per_second, 150);
  EXPECT_DOUBLE_EQ(s.busy_time_ms_per_second, 600);
  EXPECT_DOUBLE_EQ(s.num_records_in_per_second, 2000);
  EXPECT_DOUBLE_EQ(s.num_bytes_out_per_second, 5000);

  SubtaskProgress later = s;
  later.io.running_time_ms = 2500;  // 500 ms later: 100 ms more idle, 400 ms more back pressured
  later.io.idle_time_ms = 600;
  later.io.back_pressured_time_ms = 700;
  later.io.num_records_in = 4100;
  computeRates(later, &s);
  EXPECT_DOUBLE_EQ(later.idle_time_ms_per_second, 200);
  EXPECT_DOUBLE_EQ(later.back_pressured_time_ms_per_second, 800);
  EXPECT_DOUBLE_EQ(later.busy_time_ms_per_second, 0);
  EXPECT_DOUBLE_EQ(later.num_records_in_per_second, 200);

  SubtaskProgress rounded = later;  // whole ms: 51 ms idle counted in a 50 ms window
  rounded.io.running_time_ms = 2550;
  rounded.io.idle_time_ms = 651;
  computeRates(rounded, &later);
  EXPECT_DOUBLE_EQ(rounded.idle_time_ms_per_second, 1000);
  EXPECT_DOUBLE_EQ(rounded.busy_time_ms_per_second, 0);

  SubtaskProgress finished = later;  // did not run since: no rates
  computeRates(finished, &later);
  EXPECT_EQ(finished.busy_time_ms_per_second + finished.idle_time_ms_per_second, 0);

  VertexProgress v;
  v.subtasks = {s, later};
  v.subtasks[0].io.debloated_buffer_size = 4096;
  v.subtasks[1].io.debloated_buffer_size = 0;  // never debloated: ignored by the min
  aggregateSubtasks(v);
  EXPECT_DOUBLE_EQ(v.busy_time_ms_per_second, 600);            // max
  EXPECT_DOUBLE_EQ(v.back_pressured_time_ms_per_second, 800);  // max
  EXPECT_DOUBLE_EQ(v.num_records_in_per_second, 2200);         // sum
  EXPECT_EQ(v.debloated_buffer_size, 4096);
}

// Sleeps until `rows_per_second` pace is kept: the load of a slow external system, not a synchronisation.
// Adds the time it spends in processBatch (ns, measured inside the call) to `*processing_ns` when given.
class ThrottledSink : public testing::CollectSink {
 public:
  ThrottledSink(Collected* out, double rows_per_second, std::atomic<int64_t>* processing_ns = nullptr)
      : CollectSink(out), rows_per_second_(rows_per_second), processing_ns_(processing_ns) {}
  void processBatch(types::RowBatch&& in) override {
    const auto entered = std::chrono::steady_clock::now();
    if (rows_ == 0) start_ = entered;
    rows_ += static_cast<int64_t>(in.numRows());
    std::this_thread::sleep_until(
        start_ + std::chrono::microseconds(static_cast<int64_t>(static_cast<double>(rows_) * 1e6 / rows_per_second_)));
    CollectSink::processBatch(std::move(in));
    if (processing_ns_ != nullptr) {
      processing_ns_->fetch_add(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - entered).count());
    }
  }

 private:
  double rows_per_second_;
  std::atomic<int64_t>* processing_ns_;
  int64_t rows_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// A REBALANCE exchange: keeps equal-parallelism neighbours in separate vertices.
graph::TransformationPtr makeRebalance(int id, graph::TransformationPtr input) {
  auto t = std::make_shared<graph::Transformation>();
  t->id = id;
  t->name = "Rebalance";
  t->kind = TransformationKind::kPartition;
  t->partitioner.strategy = graph::ShipStrategy::kRebalance;
  t->inputs = {std::move(input)};
  return t;
}

// Source(p=1, 1..n, batches of 16) -> Map (v % 5, 2v) -REBALANCE-> ThrottledSink(p=1, 1,000 rows/s).
graph::JobGraph buildThrottled(Configuration& conf, int64_t n, Collected* out,
                               std::atomic<int64_t>* sink_processing_ns = nullptr) {
  auto source = makeTransformation(
      1, "numbers", TransformationKind::kSource, 1,
      runtime::makeOperatorFactory([n] { return std::make_unique<testing::NumberSource>(n, 16); }, true));
  auto map = makeTransformation(
      2, "Map", TransformationKind::kOneInput, 1,
      runtime::makeOperatorFactory([] { return std::make_unique<testing::KeyAndDoubleMap>(); }), {source});
  auto rebalance = makeRebalance(3, map);
  auto sink = makeTransformation(4, "Sink: throttled", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([out, sink_processing_ns] {
                                   return std::make_unique<ThrottledSink>(out, 1000.0, sink_processing_ns);
                                 }),
                                 {rebalance});
  return graph::buildJobGraph({sink}, conf);
}

Configuration throttledConfig() {
  Configuration conf;
  conf.set("taskmanager.memory.segment-size", "256b");
  conf.set("taskmanager.network.memory.max-buffers-per-channel", "4");
  conf.set("sluice.batch.size", "16");
  return conf;
}

TEST(IoMetricsTest, ThrottledSinkBackpressuresTheSourceWithinItsBuffers) {
  Configuration conf = throttledConfig();
  Collected collected;
  const int64_t n = 1000;  // about one second at 1,000 rows/s
  std::atomic<int64_t> sink_processing_ns{0};
  graph::JobGraph job = buildThrottled(conf, n, &collected, &sink_processing_ns);
  ASSERT_EQ(job.vertices.size(), 2u);
  const JobExecutionResult r = MiniCluster(conf).execute(job, conf);
  ASSERT_EQ(r.status, JobStatus::kFinished);

  // Nothing lost: every value once, sum of 2v over 1..1000 = 1000 * 1001.
  ASSERT_EQ(collected.rows.size(), static_cast<size_t>(n));
  int64_t sum = 0;
  for (const auto& row : collected.rows) sum += row[1];
  EXPECT_EQ(sum, n * (n + 1));

  const SubtaskProgress& source = r.vertices[0].subtasks.at(0);
  const SubtaskProgress& sink = r.vertices[1].subtasks.at(0);
  // Memory bounded by the configuration: one subpartition, max-buffers-per-channel = 4 -> the subpartition
  // holds at most 4 buffers and the pool max is 1 * 4 = 4; the source used all of them.
  ASSERT_EQ(source.io.partitions.size(), 1u);
  EXPECT_EQ(source.io.partitions[0].max_buffers, 4);
  EXPECT_LE(source.io.partitions[0].peak_buffers_in_use, 4);
  EXPECT_EQ(source.io.partitions[0].peak_buffers_in_use, 4);
  // The source waited for buffers the sink frees at its pace.
  EXPECT_GT(source.io.back_pressured_time_ms, 0);
  EXPECT_GT(source.back_pressured_time_ms_per_second, 0);
  EXPECT_EQ(r.vertices[0].back_pressured_time_ms_per_second, source.back_pressured_time_ms_per_second);
  // The sink never waits for a buffer (it has no output), and the time it spends on its own pace (inside
  // processBatch, as the sink measured it) is busy time, not idle: busy = running - idle with whole ms, so
  // floor(running) - floor(idle) >= floor(running - idle) >= floor(time in processBatch).
  EXPECT_EQ(sink.io.back_pressured_time_ms, 0);
  const int64_t sink_processing_ms = sink_processing_ns.load() / 1000000;
  EXPECT_GE(sink_processing_ms, 16);  // at least the first batch's pace: 16 rows at 1,000 rows/s
  EXPECT_GE(sink.io.busy_time_ms, sink_processing_ms);
  // Records: the source vertex hands n rows to the network, the sink vertex's head receives n.
  EXPECT_EQ(source.io.num_records_out, n);
  EXPECT_EQ(sink.io.num_records_in, n);
  // Every byte written into buffers was read.
  EXPECT_GT(source.io.num_bytes_out, 0);
  EXPECT_EQ(source.io.num_bytes_out, sink.io.num_bytes_in);
  ASSERT_EQ(sink.io.gates.size(), 1u);
  EXPECT_EQ(sink.io.gates[0].in_flight_bytes, 0);
  for (const SubtaskProgress* s : {&source, &sink}) {
    EXPECT_EQ(s->io.busy_time_ms + s->io.idle_time_ms + s->io.back_pressured_time_ms, s->io.running_time_ms);
    EXPECT_NEAR(s->busy_time_ms_per_second + s->idle_time_ms_per_second + s->back_pressured_time_ms_per_second, 1000.0,
                1e-6);
    EXPECT_GE(s->io.out_pool_usage, 0.0);
    EXPECT_LE(s->io.out_pool_usage, 1.0);
  }
}

TEST(IoMetricsTest, CancellingABackpressuredThrottledJobEndsItPromptly) {
  Configuration conf = throttledConfig();
  Collected collected;
  graph::JobGraph job = buildThrottled(conf, -1, &collected);  // an endless source
  auto handle = MiniCluster(conf).start(job, conf);
  ASSERT_TRUE(waitForProgress(*handle, [](const JobProgress& p) {
    return p.vertices[0].subtasks.at(0).io.back_pressured_time_ms > 0 &&
           p.vertices[0].subtasks[0].io.partitions.at(0).peak_buffers_in_use == 4;
  }));
  handle->cancel();
  // The sink finishes at most one 16-row batch (16 ms) and the source's buffer wait is released.
  ASSERT_TRUE(handle->waitFor(std::chrono::seconds(20)));  // failure guard only
  const JobExecutionResult r = handle->wait();
  EXPECT_EQ(r.status, JobStatus::kCanceled);
  EXPECT_LE(r.vertices[0].subtasks[0].io.partitions[0].peak_buffers_in_use, 4);
}

TEST(IoMetricsTest, ASinkWaitingForInputIsIdle) {
  Configuration conf;
  Collected collected;
  // TrickleSource: one batch, then nothing until cancelled; the sink has nothing to read.
  auto source = makeTransformation(
      1, "trickle", TransformationKind::kSource, 1,
      runtime::makeOperatorFactory([] { return std::make_unique<testing::TrickleSource>(10); }, true));
  auto rebalance = makeRebalance(2, source);
  auto sink = makeTransformation(
      3, "Sink: collect", TransformationKind::kSink, 1,
      runtime::makeOperatorFactory([&collected] { return std::make_unique<testing::CollectSink>(&collected); }),
      {rebalance});
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);

  // The progress callback reports rates over its interval; wait for a report in which both were idle. Both
  // only wait once the 10 rows went through, so such a report comes, whatever the machine's load: how much
  // of one 50 ms window a thread spends outside its wait (the source polls every millisecond) is up to the
  // scheduler, so it is the condition waited for rather than asserted on one window.
  std::mutex mu;
  std::condition_variable cv;
  bool seen = false;
  int reports = 0;
  SubtaskProgress sink_report;
  SubtaskProgress source_report;
  SubmitOptions options;
  options.progress_interval = std::chrono::milliseconds(50);
  options.on_progress = [&](const JobProgress& p) {
    const SubtaskProgress& snk = p.vertices[1].subtasks.at(0);
    const SubtaskProgress& src = p.vertices[0].subtasks.at(0);
    std::lock_guard<std::mutex> lock(mu);
    // From the second report on, the rates cover only the 50 ms since the previous one.
    if (++reports < 2 || seen || snk.io.num_records_in < 10) return;
    if (snk.idle_time_ms_per_second < 900 || src.idle_time_ms_per_second <= 0) return;
    seen = true;
    sink_report = snk;
    source_report = src;
    cv.notify_all();
  };
  auto handle = MiniCluster(conf).start(job, conf, options);
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return seen; }));  // failure guard only
  }
  // Idle, never back pressured (nothing to send), and the three times add up to the window.
  for (const SubtaskProgress* s : {&sink_report, &source_report}) {
    EXPECT_LE(s->idle_time_ms_per_second, 1000);
    EXPECT_EQ(s->back_pressured_time_ms_per_second, 0);
    EXPECT_NEAR(s->busy_time_ms_per_second + s->idle_time_ms_per_second, 1000.0, 1e-6);
    EXPECT_GT(s->io.idle_time_ms, 0);
    EXPECT_FALSE(s->io.is_back_pressured);
  }
  EXPECT_EQ(sink_report.io.num_records_in, 10);
  handle->cancel();
  EXPECT_EQ(handle->wait().status, JobStatus::kCanceled);
}

}  // namespace
}  // namespace sluice::cluster

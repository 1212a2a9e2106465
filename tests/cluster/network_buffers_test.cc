// Jobs through the buffer-based network stack: buffer sizes, bounded memory under backpressure, prompt
// cancellation and buffer debloating, with one TaskManager (local channels) and with two (channels between
// them over loopback TCP).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>

#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "progress_wait.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::Collected;
using testing::makeHashPartition;
using testing::makeTransformation;
using testing::waitForProgress;

// Lets a sink wait until the test opens it, or slows it down by a fixed pause per batch.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    cv.notify_all();
  }
};

class GatedSink : public testing::CollectSink {
 public:
  GatedSink(Collected* out, Gate* gate, std::chrono::milliseconds pause)
      : CollectSink(out), gate_(gate), pause_(pause) {}
  void processBatch(types::RowBatch&& in) override {
    {
      std::unique_lock<std::mutex> lock(gate_->mu);
      if (pause_.count() > 0) {
        // A slow consumer: a fixed pause per batch (the load, not a synchronisation).
        gate_->cv.wait_for(lock, pause_, [&] { return gate_->open; });
      } else {
        gate_->cv.wait(lock, [&] { return gate_->open; });
      }
    }
    CollectSink::processBatch(std::move(in));
  }

 private:
  Gate* gate_;
  std::chrono::milliseconds pause_;
};

// Source(p=1, 1..n, batches of `batch`, a watermark after each unless `watermarks` is false) -> Map (v % 5, 2v)
// -REBALANCE-> GatedSink(p=2).
graph::JobGraph buildGated(Configuration& conf, int64_t n, size_t batch, Collected* out, Gate* gate,
                           std::chrono::milliseconds pause, bool watermarks = true) {
  auto source = makeTransformation(
      1, "numbers", TransformationKind::kSource, 1,
      runtime::makeOperatorFactory(
          [n, batch, watermarks] { return std::make_unique<testing::NumberSource>(n, batch, watermarks); }, true));
  auto map = makeTransformation(2, "Map", TransformationKind::kOneInput, 1, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::KeyAndDoubleMap>();
                                }),
                                {source});
  auto sink = makeTransformation(3, "Sink: gated", TransformationKind::kSink, 2,
                                 runtime::makeOperatorFactory([out, gate, pause] {
                                   return std::make_unique<GatedSink>(out, gate, pause);
                                 }),
                                 {map});
  return graph::buildJobGraph({sink}, conf);
}

// Keys v % 5 over 1..2000: key k sums 2v over v = k, k+5, ... (400 values each).
// key 0: v = 5, 10, ..., 2000 -> 2 * 5 * (1 + ... + 400) = 10 * 80200 = 802000;
// key k in 1..4: 2 * (400 k + 5 * (0 + ... + 399)) = 800 k + 10 * 79800 = 800 k + 798000.
const std::vector<std::vector<int64_t>> kKeyedSums = {{0, 802000}, {1, 798800}, {2, 799600}, {3, 800400}, {4, 801200}};

// numbers(p=2, 1..2000) -> Map (v % 5, 2v) -HASH-> KeyedSum(p=3) -> collect(p=1); the final sums per key.
// `extra` options are set on top.
std::vector<std::vector<int64_t>> runKeyedSum(const std::string& segment_size, JobExecutionResult* result,
                                              int task_managers = 1,
                                              const std::map<std::string, std::string>& extra = {}) {
  Configuration conf;
  for (const auto& [key, value] : extra) conf.set(key, value);
  conf.set("taskmanager.memory.segment-size", segment_size);
  conf.set("local.number-taskmanager", std::to_string(task_managers));
  conf.set("sluice.batch.size", "37");
  Collected collected;
  testing::KeyedSumLog log;
  auto source = makeTransformation(1, "numbers", TransformationKind::kSource, 2,
                                   runtime::makeOperatorFactory([] {
                                     return std::make_unique<testing::NumberSource>(2000, 37);
                                   }, true));
  auto map = makeTransformation(2, "Map", TransformationKind::kOneInput, 2, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::KeyAndDoubleMap>();
                                }),
                                {source});
  auto hash = makeHashPartition(3, map, {0});
  auto sum = makeTransformation(4, "KeyedSum", TransformationKind::kOneInput, 3,
                                runtime::makeOperatorFactory([&log] { return std::make_unique<testing::KeyedSum>(&log); }),
                                {hash});
  auto sink = makeTransformation(5, "Sink: collect", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([&collected] {
                                   return std::make_unique<testing::CollectSink>(&collected);
                                 }),
                                 {sum});
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  *result = MiniCluster(conf).execute(job, conf);
  std::vector<std::vector<int64_t>> rows = collected.rows;
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(NetworkBuffersTest, TinyAndLargeBuffersGiveTheSameResult) {
  JobExecutionResult small_result;
  JobExecutionResult large_result;
  const auto small = runKeyedSum("256b", &small_result);
  const auto large = runKeyedSum("32kb", &large_result);
  EXPECT_EQ(small, kKeyedSums);
  EXPECT_EQ(large, kKeyedSums);
  // Both runs moved their rows through network buffers.
  EXPECT_GT(small_result.vertices[0].num_bytes_out, 0);
  EXPECT_GT(small_result.vertices[1].num_bytes_in, 0);
  EXPECT_GT(large_result.vertices[0].num_bytes_out, 0);
  EXPECT_EQ(small_result.remote_channels, 0);
}

TEST(NetworkBuffersTest, TwoTaskManagersOverTcpGiveTheSameResult) {
  // Subtask i runs in TaskManager i mod 2: e.g. Map 1 -> KeyedSum 2 and KeyedSum 1 -> Sink 1 cross them.
  JobExecutionResult small_result;
  JobExecutionResult large_result;
  const auto small = runKeyedSum("256b", &small_result, 2);
  const auto large = runKeyedSum("32kb", &large_result, 2);
  EXPECT_EQ(small, kKeyedSums);
  EXPECT_EQ(large, kKeyedSums);
  EXPECT_GT(small_result.vertices[1].num_bytes_in, 0);
  // Remote channels: Map i (TaskManager i % 2, i < 2) -> KeyedSum j (j % 2, j < 3): (0,1), (1,0), (1,2);
  // KeyedSum j -> Sink 0 (TaskManager 1): j = 1. 4 in all.
  EXPECT_EQ(small_result.remote_channels, 4);
  EXPECT_EQ(large_result.remote_channels, 4);
}

TEST(NetworkBuffersTest, ZeroBuffersPerChannelLiveOnFloatingBuffers) {
  // taskmanager.network.memory.buffers-per-channel 0 (FLINK-16641): remote channels have no exclusive
  // buffers and take floating ones as the producers announce their backlog; with floating-buffers-per-gate 0
  // too, each gate still has the one floating buffer Flink requires.
  for (const char* floating : {"8", "0"}) {
    JobExecutionResult result;
    const auto rows = runKeyedSum("256b", &result, 2,
                                  {{"taskmanager.network.memory.buffers-per-channel", "0"},
                                   {"taskmanager.network.memory.floating-buffers-per-gate", floating}});
    EXPECT_EQ(rows, kKeyedSums) << "floating-buffers-per-gate " << floating;
    EXPECT_EQ(result.remote_channels, 4);
  }
}

// Source -> Map -> HASH -> Sink, all at parallelism 1, the sink in slot sharing group `sink_group`, over
// two TaskManagers. Returns the result; checks the rows.
JobExecutionResult runWithSinkGroup(const std::string& sink_group) {
  Configuration conf;
  conf.set("local.number-taskmanager", "2");
  Collected collected;
  auto source = makeTransformation(1, "numbers", TransformationKind::kSource, 1, runtime::makeOperatorFactory([] {
                                     return std::make_unique<testing::NumberSource>(1000, 10);
                                   }, true));
  auto map = makeTransformation(2, "Map", TransformationKind::kOneInput, 1, runtime::makeOperatorFactory([] {
                                  return std::make_unique<testing::KeyAndDoubleMap>();
                                }),
                                {source});
  auto sink = makeTransformation(4, "Sink: collect", TransformationKind::kSink, 1,
                                 runtime::makeOperatorFactory([&collected] {
                                   return std::make_unique<testing::CollectSink>(&collected);
                                 }),
                                 {makeHashPartition(3, map, {0})});
  sink->slot_sharing_group = sink_group;
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  JobExecutionResult r = MiniCluster(conf).execute(job, conf);
  int64_t sum = 0;
  for (const auto& row : collected.rows) sum += row[1];
  EXPECT_EQ(collected.rows.size(), 1000u);
  EXPECT_EQ(sum, 1001000);  // 2v over 1..1000
  return r;
}

TEST(NetworkBuffersTest, AnotherSlotSharingGroupTakesTheNextTaskManager) {
  // One group: everything in slot 0 of TaskManager 1. The sink in group "b": slot 1, TaskManager 2.
  EXPECT_EQ(runWithSinkGroup("").remote_channels, 0);
  const JobExecutionResult r = runWithSinkGroup("b");
  EXPECT_EQ(r.task_managers, 2);
  EXPECT_EQ(r.remote_channels, 1);
}

// Gated jobs (buildGated) run with 16-row batches on `task_managers` TaskManagers, with network segments of
// `segment_size` (empty: the default 32 kb).
Configuration gatedConf(int task_managers, const std::string& segment_size) {
  Configuration conf;
  conf.set("local.number-taskmanager", std::to_string(task_managers));
  if (!segment_size.empty()) conf.set("taskmanager.memory.segment-size", segment_size);
  conf.set("sluice.batch.size", "16");
  return conf;
}

// A started gated job of `n` rows (-1: endless) whose sinks wait at the gate (pause 0) or pause per batch;
// the gate opens on destruction, whatever happened, before the handle joins the tasks.
struct GatedJob {
  GatedJob(Configuration& conf, int64_t n, std::chrono::milliseconds pause = std::chrono::milliseconds(0),
           bool watermarks = true)
      : rows(n) {
    handle = MiniCluster(conf).start(buildGated(conf, n, 16, &collected, &gate, pause, watermarks), conf);
  }
  ~GatedJob() {
    gate.release();
    if (handle) handle->waitFor(std::chrono::seconds(20));  // failure guard only
  }
  // Waits until the source is back pressured; the rows it emitted by then (-1: it never was).
  int64_t rowsOutOnceBackPressured() {
    if (!waitForProgress(*handle,
                         [](const JobProgress& p) { return p.vertices[0].subtasks.at(0).io.is_back_pressured; }))
      return -1;
    return handle->progress().vertices[0].records_out;
  }
  // The source stops, back pressured, having emitted at most `bound` rows (the buffers' capacity).
  void expectBackPressuredWithin(int64_t bound) {
    const int64_t emitted = rowsOutOnceBackPressured();
    EXPECT_GE(emitted, 0) << "the source was never back pressured";
    EXPECT_LE(emitted, bound);
  }
  // Opens the gate, waits for the job and checks that every row arrived once: the Map doubles v, so the
  // values sum to 2 (1 + ... + n) = n (n + 1).
  void expectAllRows() {
    gate.release();
    handle->wait();  // throws if the job failed
    ASSERT_EQ(collected.rows.size(), static_cast<size_t>(rows));
    int64_t sum = 0;
    for (const auto& r : collected.rows) sum += r[1];
    EXPECT_EQ(sum, rows * (rows + 1));
  }

  const int64_t rows;
  Collected collected;
  Gate gate;
  std::unique_ptr<JobHandle> handle;
};

// Runs a gated job of 100 rows (open gate) under `conf`: the ConfigError it fails with, or "(ran)" once all
// 100 rows arrived.
std::string configErrorOfGatedJob(Configuration& conf) {
  Collected collected;
  Gate gate;
  gate.release();
  graph::JobGraph job = buildGated(conf, 100, 16, &collected, &gate, std::chrono::milliseconds(0));
  try {
    MiniCluster(conf).execute(job, conf);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return collected.rows.size() == 100 ? "(ran)" : fmt::format("(ran, but {} rows arrived)", collected.rows.size());
}

TEST(NetworkBuffersTest, TooLittleNetworkMemoryForRemoteChannelsNamesTheOptions) {
  Configuration conf = gatedConf(2, "");
  // 2 segments of 32 kb per TaskManager: not even one partition pool with its remote receivers fits.
  conf.set("taskmanager.memory.network.min", "64kb");
  conf.set("taskmanager.memory.network.max", "64kb");
  const std::string msg = configErrorOfGatedJob(conf);
  EXPECT_NE(msg.find("Insufficient number of network buffers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("taskmanager.memory.network.max"), std::string::npos) << msg;
}

TEST(NetworkBuffersTest, ABadStateBackendKeyFailsTheSubmissionNamingTheKey) {
  // Checked when the job is submitted, whatever the backend (the tasks would read it at open).
  Configuration conf = gatedConf(1, "");
  conf.set("state.backend.rocksdb.memory.write-buffer-ratio", "2");
  const std::string msg = configErrorOfGatedJob(conf);
  EXPECT_NE(msg.find("state.backend.rocksdb.memory.write-buffer-ratio"), std::string::npos) << msg;
  EXPECT_NE(msg.find("outside (0, 1)"), std::string::npos) << msg;
  // Before any task: no subtask is named as having failed.
  EXPECT_EQ(msg.find("Sink: gated"), std::string::npos) << msg;
}

TEST(NetworkBuffersTest, AGateWithRemoteChannelsRequiresOneFloatingBuffer) {
  // Flink's GateBuffersSpec: a gate with remote channels requires buffers-per-channel buffers per remote
  // channel plus one floating buffer. 3 segments of 32 kb per TaskManager: TaskManager index 0 holds the
  // Map's partition (2 subpartitions + 1 = 3) and the local sink; the sink subtask in TaskManager index 1
  // (named "TaskManager 2": names count from 1) has one remote channel, so with buffers-per-channel 3 it
  // requires 3 + 1 = 4.
  Configuration conf = gatedConf(2, "");
  conf.set("taskmanager.memory.network.min", "96kb");
  conf.set("taskmanager.memory.network.max", "96kb");
  conf.set("taskmanager.network.memory.buffers-per-channel", "3");
  const std::string msg = configErrorOfGatedJob(conf);
  EXPECT_NE(msg.find("needs at least 4 buffers of 32768 bytes on TaskManager 2"), std::string::npos) << msg;
  // With 2 exclusive buffers it needs 3, which fits: the job runs.
  conf.set("taskmanager.network.memory.buffers-per-channel", "2");
  EXPECT_EQ(configErrorOfGatedJob(conf), "(ran)");
}

TEST(NetworkBuffersTest, SlowRemoteSinkLosesNothing) {
  Configuration conf = gatedConf(2, "256b");
  // Map (1/1) runs in TaskManager 1, Sink (2/2) in TaskManager 2: half the rows cross TCP. Both sinks block
  // on their first batch: credit runs out on both channels and the source stops.
  GatedJob job(conf, 5000);
  // Bound: 20 pool buffers of 256 b (2 subpartitions x 10), the local sink's 2 credits and the remote sink's
  // 2 exclusive + 8 floating buffers: 32 buffers = 8192 b, at most 512 rows of 16 b; plus 16 rows being
  // processed per sink, 16 coalesced per target and the 16-row batch in hand: 512 + 32 + 32 + 16 = 592 < 5000.
  job.expectBackPressuredWithin(592);
  job.expectAllRows();
}

TEST(NetworkBuffersTest, GarbageOnADataPortOnlyClosesThatConnection) {
  // As Flink's network server: a connection that requested no partition carries nothing of the job, so
  // garbage on it closes it (logged on stderr) and the job goes on. Failures of connections that do carry
  // channels fail the job: tests/runtime/transport_test.cc.
  Configuration conf = gatedConf(2, "");
  // Map (1/1) runs in TaskManager 1, Sink (2/2) in TaskManager 2: half the rows cross TCP. The sinks wait
  // at the gate until both data ports have seen the garbage.
  GatedJob job(conf, 5000);
  const std::vector<uint16_t> ports = job.handle->dataPorts();
  ASSERT_EQ(ports.size(), 2u);
  for (const uint16_t port : ports) {
    // A peer (a plain POSIX socket) sends an HTTP request to the data port; the server closes it.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval guard{20, 0};  // failure guard only: recv returns at the server's close
    ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard)), 0);
    const std::string garbage = "GET / HTTP/1.0\r\n\r\n";
    ASSERT_EQ(::send(fd, garbage.data(), garbage.size(), 0), static_cast<ssize_t>(garbage.size()));
    char buf[16];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    const int recv_errno = errno;
    EXPECT_TRUE(n == 0 || (n < 0 && recv_errno == ECONNRESET)) << n << " " << recv_errno;  // not a timeout
    ::close(fd);
  }
  job.expectAllRows();
}

TEST(NetworkBuffersTest, SlowSinkKeepsMemoryBoundedAndLosesNothing) {
  Configuration conf = gatedConf(1, "256b");
  // The sink blocks on its first batch, so the source fills a subpartition up to its cap and stops.
  GatedJob job(conf, 5000);
  // Bound: the pool holds 2 subpartitions * 10 = 20 buffers of 256 b; each sink may have read its
  // 2 credits more: 24 buffers = 6144 b. A row takes at least 16 b (two int64 values), so at most 384 rows
  // sit in buffers; add 16 rows being processed per sink (32), 16 coalesced per target (32) and the
  // 16-row batch in hand: 384 + 32 + 32 + 16 = 464 < 5000 rows of the source.
  job.expectBackPressuredWithin(464);
  job.expectAllRows();
}

// An endless source into sinks pausing 5 ms per batch, cancelled once backpressured.
void cancelBackpressuredJob(int task_managers) {
  Configuration conf = gatedConf(task_managers, "256b");
  GatedJob job(conf, -1, std::chrono::milliseconds(5));
  ASSERT_GE(job.rowsOutOnceBackPressured(), 0) << "the source was never back pressured";
  const auto start = std::chrono::steady_clock::now();
  job.handle->cancel();
  // The producer waits for a buffer and the sinks pause 5 ms per batch: all end within a few batches.
  ASSERT_TRUE(job.handle->waitFor(std::chrono::seconds(5)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(job.handle->wait().status, JobStatus::kCanceled);
}

TEST(NetworkBuffersTest, CancellingABackpressuredJobIsPrompt) { cancelBackpressuredJob(1); }

TEST(NetworkBuffersTest, CancellingABackpressuredJobWithRemoteChannelsIsPrompt) { cancelBackpressuredJob(2); }

// Debloating enabled with a period (1 h) that never elapses: only the starting size limits the producer's
// 32 kb buffers. No watermarks: event buffers would fill the pool whatever their size.
TEST(NetworkBuffersTest, DebloatingStartsProducersAtTheStartingSegmentSize) {
  Configuration conf = gatedConf(1, "");
  conf.set("taskmanager.network.memory.buffer-debloat.enabled", "true");
  conf.set("taskmanager.network.memory.buffer-debloat.period", "1 h");
  GatedJob job(conf, 5000, std::chrono::milliseconds(0), /*watermarks=*/false);
  // Bound: 20 pool buffers (2 subpartitions x 10) and the sinks' 2 credits each, 24 buffers of at most
  // 1024 b (taskmanager.memory.starting-segment-size) = 24576 b, at most 1536 rows of 16 b; plus 16 rows
  // being processed per sink, 16 coalesced per target and the 16-row batch in hand: 1536 + 80 = 1616 < 5000.
  // With whole 32 kb segments the source is not back pressured at all (next test).
  job.expectBackPressuredWithin(1616);
  // The gauge shows the size the producers use before the first period (Flink's debloatedBufferSize), once
  // the sinks' task loops have started (the source may be back pressured before).
  EXPECT_TRUE(
      waitForProgress(*job.handle, [](const JobProgress& p) { return p.vertices[1].debloated_buffer_size == 1024; }));
  job.expectAllRows();
}

TEST(NetworkBuffersTest, WithoutDebloatingProducersFillWholeSegments) {
  // The same job with debloating off: a 16-row batch of two BIGINT columns is a record of 337 bytes (u32
  // length, kind, 8-byte header, 2 x (10-byte type, 16 validity bytes, 128 value bytes), 16 row kinds), so
  // the 2500 rows of a subpartition take 157 x 337 = 52909 b, 2 segments of 32 kb of its 10: the source
  // finishes while both sinks still wait.
  Configuration conf = gatedConf(1, "");
  GatedJob job(conf, 5000, std::chrono::milliseconds(0), /*watermarks=*/false);
  EXPECT_TRUE(waitForProgress(*job.handle, [](const JobProgress& p) { return p.vertices[0].records_out == 5000; }));
  {
    std::lock_guard<std::mutex> lock(job.collected.mu);
    EXPECT_TRUE(job.collected.rows.empty());
  }
  job.expectAllRows();
}

TEST(NetworkBuffersTest, DebloatingShrinksTheBufferSizeOfABackpressuredJob) {
  Configuration conf = gatedConf(1, "");
  conf.set("taskmanager.network.memory.buffer-debloat.enabled", "true");
  conf.set("taskmanager.network.memory.buffer-debloat.period", "10 ms");
  conf.set("taskmanager.network.memory.buffer-debloat.target", "1 ms");
  conf.set("taskmanager.network.memory.buffer-debloat.samples", "1");
  conf.set("sluice.network.buffer-debloat.stable-periods", "0");
  GatedJob job(conf, -1, std::chrono::milliseconds(5));
  // A sink pausing 5 ms per batch of at most 16 rows (a few hundred bytes) reads well below 256 kb/s, so
  // 1 ms of in-flight data is below 256 b, and with samples = 1 (alpha = 2 / 2 = 1) the size drops at once
  // to the minimum, taskmanager.memory.min-segment-size = 256 b (from the starting 1024 b).
  EXPECT_TRUE(
      waitForProgress(*job.handle, [](const JobProgress& p) { return p.vertices[1].debloated_buffer_size == 256; }));
  EXPECT_EQ(job.handle->progress().vertices[0].debloated_buffer_size, 0);  // a source debloats nothing
  job.handle->cancel();
  EXPECT_EQ(job.handle->wait().status, JobStatus::kCanceled);
}

}  // namespace
}  // namespace sluice::cluster

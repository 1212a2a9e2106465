// sluice_debloat_bench: what buffer debloating (FLIP-183) does to the data in flight under backpressure,
// printed as a table (not a test).
//
// The backpressure scenario: a source that emits rows as fast as it can (COLUMNS BIGINT columns, batches of
// BATCH rows) -> REBALANCE -> a sink throttled to R rows/s (it sleeps to keep its pace: a slow external
// system). The source fills its partition's buffers and waits (back pressured); the sink's input gate holds
// what is in flight. Each scenario runs three times: debloating off, on with Flink's exact rule
// (sluice.network.buffer-debloat.stable-periods = 0) and on with Sluice's anti-oscillation rule (the default,
// 10 periods). The target is short (--target-ms, 100 ms; the period is target / 5, Flink's 200 ms / 1 s) so
// the size settles within seconds; after the warm-up the job's metrics are sampled every 10 ms. Loads:
// steady (every batch takes its share of time) or bursty (exponentially distributed time per batch, same
// mean: each debloat period sees a different throughput, as FLINK-24230's benchmark did).
//
// Columns:
//   sink rows/s      the sink's throttle
//   load             steady | bursty
//   debloat          off | flink (stable-periods 0) | sluice (stable-periods 10)
//   KB/s             bytes the sink's gate read per second after the warm-up (numBytesIn)
//   1st s B          mean bytes waiting in the sink's gate during the first second: before the first
//                    announcement producers fill taskmanager.memory.starting-segment-size (1 kb; FLINK-36556)
//                    of each buffer with debloating on, the whole 32 kb segment with it off
//   in-flight B      mean bytes waiting in the sink's gate (handed over, not yet read) after the warm-up
//   thr x target B   KB/s x target: what FLIP-183 aims the in-flight data at
//   size B           debloatedBufferSize at the end of the run (32768 = full segments: debloating off)
//   size min..max    debloatedBufferSize spread over the samples after the warm-up
//   changes          sizes announced upstream after the warm-up (steady load: fewer is better; FLINK-24230)
//   est. ms          estimatedTimeToConsumeBuffersMs, median after the warm-up
//   src bp ms/s      the source's backPressuredTimeMsPerSecond over the whole run
// Last line: `debloat in-flight ratio on/off: R`, in-flight (sluice rule) / in-flight (off) in the first
// scenario (1,000 rows/s, steady by default).
//
// Usage: sluice_debloat_bench [--rates R1,R2,...] [--loads steady,bursty] [--seconds S] [--warmup S]
//                             [--target-ms T] [--columns C] [--batch B] [--starting-size SIZE] [--checkpoints]
// --checkpoints prints what debloating buys checkpoints instead (FLIP-183 with FLIP-76): per rate the job
// with two source subtasks (two channels into the sink) and checkpoints every 500 ms, aligned and
// unaligned, debloating off and on (Flink's rule); columns: the checkpoints completed after the warm-up,
// their mean lastCheckpointDuration, mean largest alignment time (first to last barrier at a subtask), mean
// largest checkpointStartDelay (trigger to first barrier: the barrier's trip through the queued data) and
// mean persisted in-flight data (channel state; 0 when aligned). Try --seconds 8 --warmup 3.
// --starting-size sets taskmanager.memory.starting-segment-size (e.g. 32kb: start at full segments, as
// before FLINK-36556).
// Defaults: rates 1000,4000 rows/s, steady load, 5 s per run of which 3 s warm-up, target 100 ms, 32 columns,
// 16 rows per batch: 6 runs, about 30 s.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cluster/mini_cluster.h"
#include "common/config.h"
#include "graph/job_graph.h"
#include "graph/transformation.h"
#include "runtime/operators/stream_operator.h"
#include "types/row_batch.h"

namespace {

using namespace sluice;
using Clock = std::chrono::steady_clock;

types::RowType bigintRow(int columns) {
  types::RowType t;
  for (int i = 0; i < columns; ++i) {
    t.names.push_back(fmt::format("f{}", i));
    t.types.push_back(types::LogicalType::bigint());
  }
  return t;
}

// Emits rows 1, 2, 3, ... forever, `batch` rows per batch, every column the row's number.
class FastSource : public runtime::SourceOperator {
 public:
  FastSource(int columns, size_t batch) : type_(bigintRow(columns)), batch_(batch) {}
  runtime::InputStatus emitNext() override {
    types::RowBatch b(type_);
    for (size_t i = 0; i < batch_; ++i, ++next_) {
      for (size_t c = 0; c < type_.types.size(); ++c) b.column(c).appendLong(next_);
      b.kinds().push_back(types::RowKind::kInsert);
    }
    output_->collect(std::move(b));
    return runtime::InputStatus::kMoreAvailable;
  }

 private:
  types::RowType type_;
  size_t batch_;
  int64_t next_ = 1;
};

// Keeps a pace of `rows_per_second` by sleeping after each batch, then drops the rows. Steady: every batch
// takes its share of time; bursty: the time per batch is drawn from an exponential distribution with the
// same mean (a fixed seed), so the average rate is the same but each debloat period sees a different amount.
class ThrottledSink : public runtime::StreamOperator {
 public:
  ThrottledSink(double rows_per_second, bool bursty) : rows_per_second_(rows_per_second), bursty_(bursty) {}
  void processBatch(types::RowBatch&& in) override {
    if (!started_) {
      started_ = true;
      due_ = Clock::now();
    }
    double seconds = static_cast<double>(in.numRows()) / rows_per_second_;
    if (bursty_) seconds *= -std::log(1.0 - uniform_(rng_));
    due_ += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    std::this_thread::sleep_until(due_);
  }

 private:
  double rows_per_second_;
  bool bursty_;
  bool started_ = false;
  Clock::time_point due_;
  std::mt19937_64 rng_{42};
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
};

struct Options {
  std::vector<int64_t> rates{1000, 4000};
  std::vector<bool> bursty{false};
  double seconds = 5.0;
  double warmup = 3.0;
  int64_t target_ms = 100;
  int columns = 32;
  size_t batch = 16;
  std::string starting_size;  // taskmanager.memory.starting-segment-size; empty: the default (1 kb)
  bool checkpoints = false;   // --checkpoints: the checkpoint table instead
};

enum class Mode { kOff, kFlink, kSluice };

const char* modeName(Mode m) {
  switch (m) {
    case Mode::kOff:
      return "off";
    case Mode::kFlink:
      return "flink";
    case Mode::kSluice:
      return "sluice";
  }
  return "?";
}

struct RunResult {
  double startup_in_flight_bytes = 0;
  double bytes_per_second = 0;
  double in_flight_bytes = 0;
  int32_t last_size = 0;
  int32_t min_size = 0;
  int32_t max_size = 0;
  int64_t changes = 0;
  double estimated_ms = 0;
  double source_back_pressured = 0;
};

// fast source (`sources` subtasks) -> REBALANCE -> throttled sink.
graph::JobGraph buildJob(const Options& o, int64_t rate, bool bursty, const Configuration& conf, int sources = 1) {
  auto source = std::make_shared<graph::Transformation>();
  source->id = 1;
  source->name = "fast source";
  source->kind = graph::TransformationKind::kSource;
  source->parallelism = sources;
  const int columns = o.columns;
  const size_t batch = o.batch;
  source->factory =
      runtime::makeOperatorFactory([columns, batch] { return std::make_unique<FastSource>(columns, batch); }, true);
  auto rebalance = std::make_shared<graph::Transformation>();
  rebalance->id = 2;
  rebalance->name = "Rebalance";
  rebalance->kind = graph::TransformationKind::kPartition;
  rebalance->partitioner.strategy = graph::ShipStrategy::kRebalance;
  rebalance->inputs = {source};
  auto sink = std::make_shared<graph::Transformation>();
  sink->id = 3;
  sink->name = "Sink: throttled";
  sink->kind = graph::TransformationKind::kSink;
  sink->parallelism = 1;
  const double r = static_cast<double>(rate);
  sink->factory = runtime::makeOperatorFactory([r, bursty] { return std::make_unique<ThrottledSink>(r, bursty); });
  sink->inputs = {rebalance};
  const graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  if (job.vertices.size() != 2) throw std::runtime_error("expected a source and a sink vertex");

  return job;
}

RunResult runOnce(const Options& o, int64_t rate, bool bursty, Mode mode) {
  Configuration conf;
  conf.set("sluice.batch.size", std::to_string(o.batch));
  conf.set("taskmanager.network.memory.buffer-debloat.enabled", mode == Mode::kOff ? "false" : "true");
  conf.set("taskmanager.network.memory.buffer-debloat.target", fmt::format("{} ms", o.target_ms));
  // Flink's period / target ratio (200 ms / 1 s), scaled to the short target.
  conf.set("taskmanager.network.memory.buffer-debloat.period",
           fmt::format("{} ms", std::max<int64_t>(1, o.target_ms / 5)));
  if (mode == Mode::kFlink) conf.set("sluice.network.buffer-debloat.stable-periods", "0");
  if (!o.starting_size.empty()) conf.set("taskmanager.memory.starting-segment-size", o.starting_size);

  const graph::JobGraph job = buildJob(o, rate, bursty, conf);
  auto handle = cluster::MiniCluster(conf).start(job, conf);
  const auto start = Clock::now();
  const auto warm = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup));
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  const auto first_second = start + std::chrono::seconds(1);
  RunResult res;
  int64_t samples = 0;
  double in_flight_sum = 0;
  int64_t startup_samples = 0;
  double startup_sum = 0;
  std::vector<int64_t> estimated;
  int64_t bytes_at_warm = -1;
  int64_t announcements_at_warm = 0;
  Clock::time_point warm_time;
  runtime::GateIOMetrics last;
  // Sampling with a sleep is the bench's clock, not a synchronisation.
  while (Clock::now() < end && !handle->isDone()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const cluster::JobProgress p = handle->progress();
    const cluster::SubtaskProgress& s = p.vertices.at(1).subtasks.at(0);
    if (s.io.gates.empty()) continue;
    last = s.io.gates[0];
    if (Clock::now() < first_second) {
      ++startup_samples;
      startup_sum += static_cast<double>(last.in_flight_bytes);
    }
    if (Clock::now() < warm) continue;
    if (bytes_at_warm < 0) {
      bytes_at_warm = last.num_bytes_in;
      announcements_at_warm = last.buffer_size_announcements;
      warm_time = Clock::now();
      res.min_size = res.max_size = last.debloated_buffer_size;
    }
    ++samples;
    in_flight_sum += static_cast<double>(last.in_flight_bytes);
    estimated.push_back(last.estimated_time_to_consume_buffers_ms);
    res.min_size = std::min(res.min_size, last.debloated_buffer_size);
    res.max_size = std::max(res.max_size, last.debloated_buffer_size);
  }
  const cluster::JobProgress final_progress = handle->progress();
  handle->cancel();
  handle->wait();
  if (samples == 0) throw std::runtime_error("no samples after the warm-up: raise --seconds");
  const double measured = std::chrono::duration<double>(Clock::now() - warm_time).count();
  res.bytes_per_second = static_cast<double>(last.num_bytes_in - bytes_at_warm) / std::max(1e-3, measured);
  res.in_flight_bytes = in_flight_sum / static_cast<double>(samples);
  res.startup_in_flight_bytes = startup_samples > 0 ? startup_sum / static_cast<double>(startup_samples) : 0;
  std::nth_element(estimated.begin(), estimated.begin() + static_cast<std::ptrdiff_t>(estimated.size() / 2),
                   estimated.end());
  res.estimated_ms = static_cast<double>(estimated[estimated.size() / 2]);
  res.changes = last.buffer_size_announcements - announcements_at_warm;
  res.last_size = mode == Mode::kOff ? 32768 : last.debloated_buffer_size;
  if (mode == Mode::kOff) res.min_size = res.max_size = 32768;
  res.source_back_pressured = final_progress.vertices.at(0).subtasks.at(0).back_pressured_time_ms_per_second;
  return res;
}

// Checkpoints of the same backpressured job (execution.checkpointing.interval 500 ms), aligned or unaligned,
// debloating off or on (Flink's rule): the figures of every checkpoint completed after the warm-up.
struct CheckpointResult {
  int64_t checkpoints = 0;
  double duration_ms = 0;      // lastCheckpointDuration, mean
  double alignment_ms = 0;     // the largest alignment time of a subtask, mean
  double start_delay_ms = 0;   // the largest checkpointStartDelay of a subtask (barrier travel), mean
  double persisted_bytes = 0;  // persisted in-flight data (channel state), mean
};

CheckpointResult runCheckpoints(const Options& o, int64_t rate, bool unaligned, bool debloat) {
  Configuration conf;
  conf.set("sluice.batch.size", std::to_string(o.batch));
  conf.set("taskmanager.network.memory.buffer-debloat.enabled", debloat ? "true" : "false");
  conf.set("taskmanager.network.memory.buffer-debloat.target", fmt::format("{} ms", o.target_ms));
  conf.set("taskmanager.network.memory.buffer-debloat.period",
           fmt::format("{} ms", std::max<int64_t>(1, o.target_ms / 5)));
  conf.set("sluice.network.buffer-debloat.stable-periods", "0");
  conf.set("execution.checkpointing.interval", "500 ms");
  conf.set("execution.checkpointing.unaligned.enabled", unaligned ? "true" : "false");
  const graph::JobGraph job = buildJob(o, rate, false, conf, 2);
  auto handle = cluster::MiniCluster(conf).start(job, conf);
  const auto start = Clock::now();
  const auto warm = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup));
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  CheckpointResult res;
  int64_t seen = -1;
  while (Clock::now() < end && !handle->isDone()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const cluster::JobProgress p = handle->progress();
    if (!p.checkpoints) continue;
    const runtime::checkpoint::CheckpointStats& c = *p.checkpoints;
    if (Clock::now() < warm) {
      seen = c.last_checkpoint_id;
      continue;
    }
    if (c.last_checkpoint_id == seen || c.last_checkpoint_id == 0) continue;
    seen = c.last_checkpoint_id;
    ++res.checkpoints;
    res.duration_ms += static_cast<double>(c.last_checkpoint_duration_ms);
    res.alignment_ms += static_cast<double>(c.last_checkpoint_max_alignment_ns) / 1e6;
    res.start_delay_ms += static_cast<double>(c.last_checkpoint_max_start_delay_ns) / 1e6;
    res.persisted_bytes += static_cast<double>(c.last_checkpoint_persisted_in_flight_bytes);
  }
  handle->cancel();
  handle->wait();
  if (res.checkpoints > 0) {
    const auto n = static_cast<double>(res.checkpoints);
    res.duration_ms /= n;
    res.alignment_ms /= n;
    res.start_delay_ms /= n;
    res.persisted_bytes /= n;
  }
  return res;
}

void printCheckpointTable(const Options& o) {
  fmt::print("\nCheckpoints under backpressure (2 fast sources -> REBALANCE -> throttled sink, interval 500 ms, "
             "debloat target {} ms; checkpoints completed after the warm-up)\n\n",
             o.target_ms);
  fmt::print("{:>11} | {:>9} | {:>7} | {:>5} | {:>11} | {:>12} | {:>14} | {:>12}\n", "sink rows/s", "mode",
             "debloat", "ckpts", "duration ms", "alignment ms", "start delay ms", "in-flight KB");
  fmt::print("{}\n", std::string(103, '-'));
  for (int64_t rate : o.rates) {
    for (bool unaligned : {false, true}) {
      for (bool debloat : {false, true}) {
        const CheckpointResult r = runCheckpoints(o, rate, unaligned, debloat);
        fmt::print("{:>11} | {:>9} | {:>7} | {:>5} | {:>11.0f} | {:>12.0f} | {:>14.0f} | {:>12.1f}\n", rate,
                   unaligned ? "unaligned" : "aligned", debloat ? "on" : "off", r.checkpoints, r.duration_ms,
                   r.alignment_ms, r.start_delay_ms, r.persisted_bytes / 1024.0);
        std::fflush(stdout);
      }
    }
  }
}

int64_t parseCount(const std::string& flag, const char* v) {
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || n <= 0) throw std::invalid_argument(flag + " needs a positive integer");
  return n;
}

double parseSeconds(const std::string& flag, const char* v) {
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || s <= 0) throw std::invalid_argument(flag + " needs a positive number of seconds");
  return s;
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--checkpoints") {
      o.checkpoints = true;
      continue;
    }
    static const char* const kFlags[] = {"--rates",     "--loads",   "--seconds", "--warmup",
                                         "--target-ms", "--columns", "--batch",   "--starting-size"};
    if (std::find(std::begin(kFlags), std::end(kFlags), a) == std::end(kFlags)) {
      throw std::invalid_argument("unknown option " + a);
    }
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + a);
    const char* v = argv[++i];
    if (a == "--rates") {
      o.rates.clear();
      std::stringstream ss(v);
      std::string item;
      while (std::getline(ss, item, ',')) o.rates.push_back(parseCount(a, item.c_str()));
    } else if (a == "--loads") {
      o.bursty.clear();
      std::stringstream ss(v);
      std::string item;
      while (std::getline(ss, item, ',')) {
        if (item != "steady" && item != "bursty") throw std::invalid_argument("--loads takes steady and/or bursty");
        o.bursty.push_back(item == "bursty");
      }
    } else if (a == "--seconds") {
      o.seconds = parseSeconds(a, v);
    } else if (a == "--warmup") {
      o.warmup = parseSeconds(a, v);
    } else if (a == "--target-ms") {
      o.target_ms = parseCount(a, v);
    } else if (a == "--columns") {
      o.columns = static_cast<int>(parseCount(a, v));
    } else if (a == "--batch") {
      o.batch = static_cast<size_t>(parseCount(a, v));
    } else if (a == "--starting-size") {
      o.starting_size = v;
    }
  }
  if (o.warmup >= o.seconds) throw std::invalid_argument("--warmup must be shorter than --seconds");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parseArgs(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "sluice_debloat_bench: %s\nusage: sluice_debloat_bench [--rates R1,R2,...] [--loads steady,bursty] "
                 "[--seconds S] [--warmup S] [--target-ms T] [--columns C] [--batch B] [--starting-size SIZE] "
                 "[--checkpoints]\n",
                 e.what());
    return 2;
  }
  if (o.checkpoints) {
    try {
      printCheckpointTable(o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sluice_debloat_bench failed: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  fmt::print("Buffer debloating under backpressure: fast source -> REBALANCE -> sink throttled to R rows/s\n");
  fmt::print(
      "({} BIGINT columns, {} rows per batch, 32 kb segments, starting size {}, debloat target {} ms, period {} ms; "
      "{:.1f} s per run, measured after {:.1f} s)\n\n",
      o.columns, o.batch, o.starting_size.empty() ? std::string("1 kb (default)") : o.starting_size, o.target_ms,
      std::max<int64_t>(1, o.target_ms / 5), o.seconds, o.warmup);
  fmt::print("{:>11} | {:>6} | {:>7} | {:>8} | {:>9} | {:>11} | {:>14} | {:>7} | {:>13} | {:>7} | {:>7} | {:>11}\n",
             "sink rows/s", "load", "debloat", "KB/s", "1st s B", "in-flight B", "thr x target B", "size B",
             "size min..max", "changes", "est. ms", "src bp ms/s");
  fmt::print("{}\n", std::string(142, '-'));
  double ratio = 0;
  try {
    for (bool bursty : o.bursty) {
      for (size_t k = 0; k < o.rates.size(); ++k) {
        double off_in_flight = 0;
        for (Mode mode : {Mode::kOff, Mode::kFlink, Mode::kSluice}) {
          const RunResult r = runOnce(o, o.rates[k], bursty, mode);
          const double target_bytes = r.bytes_per_second * static_cast<double>(o.target_ms) / 1000.0;
          fmt::print(
              "{:>11} | {:>6} | {:>7} | {:>8.1f} | {:>9.0f} | {:>11.0f} | {:>14.0f} | {:>7} | {:>13} | {:>7} | "
              "{:>7.0f} | {:>11.0f}\n",
              o.rates[k], bursty ? "bursty" : "steady", modeName(mode), r.bytes_per_second / 1024.0,
              r.startup_in_flight_bytes, r.in_flight_bytes, target_bytes, r.last_size,
              fmt::format("{}..{}", r.min_size, r.max_size), r.changes, r.estimated_ms, r.source_back_pressured);
          std::fflush(stdout);
          if (mode == Mode::kOff) off_in_flight = r.in_flight_bytes;
          // The ratio of the first scenario (the issue's: 1,000 rows/s, steady) with Sluice's rule.
          if (mode == Mode::kSluice && k == 0 && bursty == o.bursty.front()) {
            ratio = off_in_flight > 0 ? r.in_flight_bytes / off_in_flight : 0;
          }
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice_debloat_bench failed: %s\n", e.what());
    return 1;
  }
  fmt::print("\ndebloat in-flight ratio on/off: {:.3f}\n", ratio);
  return 0;
}

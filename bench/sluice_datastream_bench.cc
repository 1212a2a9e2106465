// sluice_datastream_bench: keyed DataStream jobs on the keyed state layer, printed as a table (not a test).
//
// Input: N records (default 20,000,000) generated in memory before timing: record i has key i % K (default
// K = 10,000), event time i * ms-per-record (default 1 ms) and value (i * 7919) % 1000. A FLIP-27 source hands
// the readers every p-th record each. Two jobs, at -p 1 and -p 2, checkpoints off:
//   keyed running sum:  source -> keyBy(key) -> sum(value) -> sink (every update emitted, as Flink's sum)
//   tumbling window:    source (monotonous timestamps) -> keyBy(key) -> 1 s tumbling event-time window with an
//                       AggregateFunction of count and max -> sink
// The sinks count the records they get and sum a field of each, so results stay alive; each run is checked
// against a plain C++ loop over the same vector (a flat array per key, windows closed as time passes), whose
// own rate is printed as the baseline. CPU s is getrusage of the whole process (every thread) around execute();
// records/CPU-s = input records / CPU s.
//
// Usage: sluice_datastream_bench [--records N] [--keys K] [--ms-per-record M] [--repeat R] [--max-p P]
//                                [--job sum|window]
// Defaults: 20,000,000 records, 10,000 keys, 1 ms per record, best of 2 runs (by CPU s), -p 1 and 2.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/datastream.h"
#include "bench_args.h"
#include "bench_util.h"
#include "datastream_sources.h"

namespace {

using bench_ds::Event;
using bench_ds::Events;
using bench_ds::SinkTotals;
using bench_ds::SummingSink;
using bench_ds::Totals;
using bench_ds::VectorSource;
using bench_ds::WindowResult;
using bench_ds::generate;
using Clock = std::chrono::steady_clock;

constexpr int64_t kWindowMs = 1000;

class CountMax final : public sluice::api::AggregateFunction<Event, WindowResult, WindowResult> {
 public:
  WindowResult createAccumulator() override { return WindowResult{0, 0, INT64_MIN}; }
  WindowResult add(const Event& e, WindowResult acc) override {
    acc.key = e.key;
    ++acc.count;
    acc.max = std::max(acc.max, e.value);
    return acc;
  }
  WindowResult getResult(const WindowResult& acc) override { return acc; }
  WindowResult merge(WindowResult a, WindowResult b) override {
    a.count += b.count;
    a.max = std::max(a.max, b.max);
    return a;
  }
};

enum class Job { kKeyedSum, kWindow };

const char* jobName(Job job) { return job == Job::kKeyedSum ? "keyed running sum" : "1 s tumbling count+max"; }

// The sink checks: sum job, the sum of every emitted running sum; window job, sum of the windows' max.
void buildJob(sluice::api::StreamExecutionEnvironment& env, Job job, const Events& events,
              const std::shared_ptr<SinkTotals>& totals) {
  auto source = std::make_shared<VectorSource>(events);
  if (job == Job::kKeyedSum) {
    env.fromSource(source, sluice::api::WatermarkStrategy<Event>::noWatermarks(), "events")
        .keyBy([](const Event& e) { return e.key; })
        .sum(&Event::value)
        .sinkTo(std::make_shared<SummingSink<Event, &Event::value>>(totals));
    return;
  }
  env.fromSource(source,
                 sluice::api::WatermarkStrategy<Event>::forMonotonousTimestamps().withTimestampAssigner(
                     [](const Event& e) { return e.time; }),
                 "events")
      .keyBy([](const Event& e) { return e.key; })
      .window(sluice::api::TumblingEventTimeWindows::of(kWindowMs))
      .aggregate(CountMax{})
      .sinkTo(std::make_shared<SummingSink<WindowResult, &WindowResult::max>>(totals));
}

// The same computations as plain loops over the vector: per-key flat arrays; the window loop closes a key's
// window when a record of a later window arrives for it and flushes the rest at the end.
Totals baselineSum(const std::vector<Event>& events, int64_t keys) {
  std::vector<int64_t> sums(static_cast<size_t>(keys), 0);
  Totals t;
  for (const Event& e : events) {
    int64_t& s = sums[static_cast<size_t>(e.key)];
    s += e.value;
    ++t.count;
    t.sum += static_cast<uint64_t>(s);
  }
  return t;
}

Totals baselineWindow(const std::vector<Event>& events, int64_t keys) {
  struct Open {
    int64_t start = INT64_MIN;
    int64_t count = 0;
    int64_t max = 0;
  };
  std::vector<Open> open(static_cast<size_t>(keys));
  Totals t;
  auto close = [&t](const Open& w) {
    if (w.count == 0) return;
    ++t.count;
    t.sum += static_cast<uint64_t>(w.max);
  };
  for (const Event& e : events) {
    Open& w = open[static_cast<size_t>(e.key)];
    const int64_t start = e.time - e.time % kWindowMs;  // times are >= 0
    if (w.start != start) {
      close(w);
      w = Open{start, 0, INT64_MIN};
    }
    ++w.count;
    w.max = std::max(w.max, e.value);
  }
  for (const Open& w : open) close(w);
  return t;
}

struct Measurement {
  double wall_s = 1e300;
  double cpu_s = 1e300;
};

Measurement measure(Job job, int parallelism, const Events& events, int repeat, const Totals& expected) {
  Measurement best;
  for (int r = 0; r < repeat; ++r) {
    sluice::Configuration config;
    config.set("parallelism.default", std::to_string(parallelism));
    sluice::api::StreamExecutionEnvironment env(std::move(config));
    auto totals = std::make_shared<SinkTotals>();
    buildJob(env, job, events, totals);
    const double cpu0 = sluice::bench::processCpuSeconds();
    const auto wall0 = Clock::now();
    env.execute(jobName(job));
    const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();
    const double cpu = sluice::bench::processCpuSeconds() - cpu0;
    const Totals got{totals->count.load(), totals->sum.load()};
    if (!(got == expected)) {
      throw std::runtime_error(fmt::format("{} at -p {}: sink saw {} records (sum {}), the loop {} (sum {})",
                                           jobName(job), parallelism, got.count, got.sum, expected.count,
                                           expected.sum));
    }
    if (cpu < best.cpu_s) best = Measurement{wall, cpu};
  }
  return best;
}

std::string millions(double per_s) { return fmt::format("{:.2f} M", per_s / 1e6); }

}  // namespace

int main(int argc, char** argv) {
  return sluice::bench::runMain("sluice_datastream_bench", [&] {
    int64_t records = 20'000'000;
    int64_t keys = 10'000;
    int64_t ms_per_record = 1;
    int64_t repeat = 2;
    int64_t max_p = 2;
    // --job sum|window runs one of the two (for profiling); the rest are counts.
    std::string only;
    std::vector<char*> args{argv[0]};
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--job" && i + 1 < argc) {
        only = argv[++i];
        if (only != "sum" && only != "window") throw std::runtime_error("--job takes sum or window, got " + only);
      } else {
        args.push_back(argv[i]);
      }
    }
    sluice::bench::parseCountOptions(static_cast<int>(args.size()), args.data(),
                                     {{"--records", &records},
                                      {"--keys", &keys},
                                      {"--ms-per-record", &ms_per_record},
                                      {"--repeat", &repeat},
                                      {"--max-p", &max_p}});
    if (records < 1 || keys < 1 || ms_per_record < 1 || repeat < 1 || max_p < 1) {
      throw std::runtime_error("--records, --keys, --ms-per-record, --repeat and --max-p must be >= 1");
    }
    const Events events = generate(records, keys, ms_per_record);

    fmt::print("sluice_datastream_bench: {} in-memory records, {} keys, event time {} ms per record; checkpoints off\n",
               records, keys, ms_per_record);
    fmt::print("best of {} runs by CPU s; CPU s = getrusage of the process around execute(); records/CPU-s = input "
               "records / CPU s\n\n",
               repeat);
    fmt::print("{:<24} | {:>2} | {:>10} | {:>7} | {:>7} | {:>14} | {:>16}\n", "job", "p", "records", "wall s", "CPU s",
               "records/CPU-s", "hand loop rec/s");
    fmt::print("{:-<24}-+-{:-<2}-+-{:-<10}-+-{:-<7}-+-{:-<7}-+-{:-<14}-+-{:-<16}\n", "", "", "", "", "", "", "");
    for (Job job : {Job::kKeyedSum, Job::kWindow}) {
      if (!only.empty() && (only == "sum") != (job == Job::kKeyedSum)) continue;
      const double c0 = sluice::bench::processCpuSeconds();
      const Totals expected = job == Job::kKeyedSum ? baselineSum(*events, keys) : baselineWindow(*events, keys);
      const double loop_s = sluice::bench::processCpuSeconds() - c0;
      for (int p = 1; p <= max_p; ++p) {
        const Measurement m = measure(job, p, events, static_cast<int>(repeat), expected);
        fmt::print("{:<24} | {:>2} | {:>10} | {:>7.2f} | {:>7.2f} | {:>14} | {:>16}\n", jobName(job), p, records,
                   m.wall_s, m.cpu_s, millions(static_cast<double>(records) / m.cpu_s),
                   millions(static_cast<double>(records) / std::max(loop_s, 1e-9)));
        std::fflush(stdout);
      }
    }
    return 0;
  });
}

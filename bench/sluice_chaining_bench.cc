// sluice_chaining_bench: what operator chaining is worth, printed as a table (not a test).
//
// The same DataStream job runs with chaining on and off (pipeline.operator-chaining.enabled), at -p 1 and -p 2:
//   fromSequence(1, N) -> map -> filter -> map -> filter -> map -> a counting sink
// Chained, the source, the five operators and the sink form one task per subtask (one thread, records passed
// in batches by reference); unchained, each of the seven operators is its own task and every edge is an
// exchange between threads. The JobGraph's vertex count (from getExecutionPlan()) shows which case ran.
// Every run's count and sum are checked against a plain C++ loop over the same numbers, whose own rate is
// printed as the baseline.
//
// Usage: sluice_chaining_bench [--rows N] [--unchained-rows N] [--repeat N]
// Defaults: 80,000,000 rows chained and 30,000,000 unchained (about a second each at -p 1 on a 2-core
// machine), best of 2 runs.
// Rates are rows of the source per second of wall time, job start-up included.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/datastream.h"
#include "bench_args.h"

namespace {

using Clock = std::chrono::steady_clock;
using sluice::api::Sink;
using sluice::api::SinkWriter;
using sluice::api::SinkWriterContext;

// The five operators, shared by the job and the baseline loop so both compute the same thing.
inline int64_t stage1(int64_t x) { return x * 3 + 1; }
inline bool keep1(int64_t x) { return x % 4 != 0; }
inline int64_t stage2(int64_t x) { return x ^ (x >> 3); }
inline bool keep2(int64_t x) { return (x & 7) != 5; }
inline int64_t stage3(int64_t x) { return x - 7; }

// What a run produced: the number of records reaching the sink and their sum (wrapping).
struct Totals {
  int64_t count = 0;
  uint64_t sum = 0;
  bool operator==(const Totals& o) const { return count == o.count && sum == o.sum; }
};

// Shared by the writers of one run. Writers add their subtask's totals once, at the end of input.
struct SinkState {
  std::atomic<int64_t> count{0};
  std::atomic<uint64_t> sum{0};
};

// A sink that counts and sums its records and discards them (Flink's DiscardingSink plus a counter).
class CountingSink final : public Sink<int64_t> {
 public:
  explicit CountingSink(std::shared_ptr<SinkState> state) : state_(std::move(state)) {}

  class Writer final : public SinkWriter<int64_t> {
   public:
    explicit Writer(std::shared_ptr<SinkState> state) : state_(std::move(state)) {}
    void write(const int64_t& value, std::optional<int64_t>) override {
      ++count_;
      sum_ += static_cast<uint64_t>(value);
    }
    void flush(bool end_of_input) override {
      if (!end_of_input) return;
      state_->count += count_;
      state_->sum += sum_;
      count_ = 0;
      sum_ = 0;
    }

   private:
    std::shared_ptr<SinkState> state_;
    int64_t count_ = 0;
    uint64_t sum_ = 0;
  };

  std::unique_ptr<SinkWriter<int64_t>> createWriter(const SinkWriterContext&) const override {
    return std::make_unique<Writer>(state_);
  }

 private:
  std::shared_ptr<SinkState> state_;
};

// Builds the job on `env`; the sink adds into `state`.
void buildPipeline(sluice::api::StreamExecutionEnvironment& env, int64_t rows,
                   const std::shared_ptr<SinkState>& state) {
  env.fromSequence(1, rows)
      .map([](const int64_t& x) { return stage1(x); })
      .name("map1")
      .filter([](const int64_t& x) { return keep1(x); })
      .name("filter1")
      .map([](const int64_t& x) { return stage2(x); })
      .name("map2")
      .filter([](const int64_t& x) { return keep2(x); })
      .name("filter2")
      .map([](const int64_t& x) { return stage3(x); })
      .name("map3")
      .sinkTo(std::make_shared<CountingSink>(state))
      .name("count");
}

// The same computation as a plain loop (the reference totals and the baseline rate).
Totals baseline(int64_t rows) {
  Totals t;
  for (int64_t i = 1; i <= rows; ++i) {
    int64_t x = stage1(i);
    if (!keep1(x)) continue;
    x = stage2(x);
    if (!keep2(x)) continue;
    x = stage3(x);
    ++t.count;
    t.sum += static_cast<uint64_t>(x);
  }
  return t;
}

// One measured configuration: JobGraph vertices and the best wall time of the runs.
struct Measurement {
  size_t vertices = 0;
  double seconds = 0;
};

sluice::api::StreamExecutionEnvironment makeEnv(int parallelism, bool chaining) {
  sluice::Configuration config;
  config.set("parallelism.default", std::to_string(parallelism));
  config.set("pipeline.operator-chaining.enabled", chaining ? "true" : "false");
  return sluice::api::StreamExecutionEnvironment(std::move(config));
}

Measurement measure(int parallelism, bool chaining, int64_t rows, int repeat, const Totals& expected) {
  Measurement m;
  {
    auto env = makeEnv(parallelism, chaining);
    buildPipeline(env, rows, std::make_shared<SinkState>());
    m.vertices = nlohmann::json::parse(env.getExecutionPlan("chaining bench")).at("nodes").size();
  }
  m.seconds = 1e300;
  for (int r = 0; r < repeat; ++r) {
    auto env = makeEnv(parallelism, chaining);
    auto state = std::make_shared<SinkState>();
    buildPipeline(env, rows, state);
    const auto start = Clock::now();
    env.execute("chaining bench");
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    const Totals got{state->count.load(), state->sum.load()};
    if (!(got == expected)) {
      throw std::runtime_error(fmt::format("p={} chaining={}: sink saw {} rows (sum {}), expected {} (sum {})",
                                           parallelism, chaining ? "on" : "off", got.count, got.sum, expected.count,
                                           expected.sum));
    }
    m.seconds = std::min(m.seconds, s);
  }
  return m;
}

std::string millions(double rows_per_s) { return fmt::format("{:.2f} M", rows_per_s / 1e6); }

}  // namespace

int main(int argc, char** argv) {
  // Sized for about a second per run on a 2-core machine: chained runs are ~3x faster.
  int64_t rows = 80'000'000;
  int64_t unchained_rows = 30'000'000;
  int repeat = 2;
  try {
    int64_t repeat_count = repeat;
    sluice::bench::parseCountOptions(
        argc, argv, {{"--rows", &rows}, {"--unchained-rows", &unchained_rows}, {"--repeat", &repeat_count}});
    repeat = static_cast<int>(repeat_count);

    const auto b0 = Clock::now();
    const Totals expected = baseline(rows);
    const double baseline_s = std::chrono::duration<double>(Clock::now() - b0).count();
    const Totals expected_unchained = baseline(unchained_rows);

    fmt::print("sluice_chaining_bench: fromSequence -> map -> filter -> map -> filter -> map -> counting sink\n");
    fmt::print(
        "source rows: {} chained, {} unchained; best of {} runs; rows/s = source rows / wall time (start-up "
        "included)\n\n",
        rows, unchained_rows, repeat);
    fmt::print("{:>2} | {:>16} | {:>14} | {:>18} | {:>16} | {:>8}\n", "p", "vertices chained", "rows/s chained",
               "vertices unchained", "rows/s unchained", "speed-up");
    fmt::print("{:-<2}-+-{:-<16}-+-{:-<14}-+-{:-<18}-+-{:-<16}-+-{:-<8}\n", "", "", "", "", "", "");
    for (int p : {1, 2}) {
      const Measurement on = measure(p, true, rows, repeat, expected);
      const Measurement off = measure(p, false, unchained_rows, repeat, expected_unchained);
      const double on_rate = static_cast<double>(rows) / on.seconds;
      const double off_rate = static_cast<double>(unchained_rows) / off.seconds;
      fmt::print("{:>2} | {:>16} | {:>14} | {:>18} | {:>16} | {:>7.1f}x\n", p, on.vertices, millions(on_rate),
                 off.vertices, millions(off_rate), on_rate / off_rate);
      std::fflush(stdout);
    }
    fmt::print("\nplain C++ loop (1 thread, no engine): {} rows/s\n", millions(static_cast<double>(rows) / baseline_s));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice_chaining_bench: %s\n", e.what());
    return 1;
  }
}

// sluice_backlog_bench: FLIP-327's experiment (a table on stdout; not a test). A keyed reduce over N records
// (default 10,000,000, K = 100,000 keys) at -p 1, on the RocksDB and the heap backend, three ways:
//   stream   plain STREAMING: every record reads and writes its key's state;
//   batch    execution.runtime-mode = BATCH: the input sorted by key, one final value per key;
//   backlog  STREAMING in FLIP-327's mixed mode: the source reports backlog for the whole input (its watermark
//            lags far behind the wall clock, pipeline.backlog.watermark-lag-threshold = 1 min, FLIP-328) and
//            execution.checkpointing.interval-during-backlog = 0, so the reduce's input is sorted by key
//            and each key's state is read and written once.
// Then a SQL GROUP BY over the flights data repeated with shifted dates (91 copies: 5,014,555 rows), the
// same three ways on RocksDB. Each DataStream run is checked against a plain loop over the same
// events (stream and backlog emit every running value, batch one per key). CPU s is getrusage of the whole
// process around execute(); records/CPU-s = input records / CPU s. The last two lines are the RocksDB
// keyed reduce's backlog/batch and backlog/stream throughput ratios.
//
// Usage: sluice_backlog_bench [--records N] [--keys K] [--repeat R] [--copies C]

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/datastream.h"
#include "bench_args.h"
#include "bench_util.h"
#include "datastream_sources.h"
#include "flights_data.h"

namespace {

using bench_ds::Event;
using bench_ds::Events;
using bench_ds::SinkTotals;
using bench_ds::SummingSink;
using bench_ds::Totals;
using bench_ds::VectorSource;
using Clock = std::chrono::steady_clock;

enum class Mode { kStream, kBatch, kBacklog };
const char* modeName(Mode m) { return m == Mode::kStream ? "stream" : m == Mode::kBatch ? "batch" : "backlog"; }

void applyMode(sluice::Configuration& config, Mode mode) {
  if (mode == Mode::kBatch) config.set("execution.runtime-mode", "BATCH");
  if (mode == Mode::kBacklog) {
    config.set("execution.checkpointing.interval-during-backlog", "0");
    config.set("pipeline.backlog.watermark-lag-threshold", "1 min");
  }
}

// stream / backlog: every running sum (a key's records keep their order when sorted); batch: one final
// value per key.
Totals expected(const std::vector<Event>& events, int64_t keys, Mode mode) {
  std::vector<int64_t> sums(static_cast<size_t>(keys), 0);
  std::vector<char> seen(static_cast<size_t>(keys), 0);
  Totals t;
  for (const Event& e : events) {
    int64_t& s = sums[static_cast<size_t>(e.key)];
    s += e.value;
    seen[static_cast<size_t>(e.key)] = 1;
    if (mode != Mode::kBatch) {
      ++t.count;
      t.sum += static_cast<uint64_t>(s);
    }
  }
  if (mode == Mode::kBatch) {
    for (size_t k = 0; k < sums.size(); ++k) {
      if (!seen[k]) continue;
      ++t.count;
      t.sum += static_cast<uint64_t>(sums[k]);
    }
  }
  return t;
}

struct Measurement {
  double wall_s = 1e300;
  double cpu_s = 1e300;
};

Measurement measureReduce(const std::string& backend, Mode mode, const Events& events, int64_t keys, int repeat,
                          const sluice::bench::ScratchDirectory& scratch) {
  const Totals want = expected(*events, keys, mode);
  Measurement best;
  for (int r = 0; r < repeat; ++r) {
    sluice::Configuration config;
    config.set("parallelism.default", "1");
    config.set("state.backend.type", backend);
    config.set("io.tmp.dirs", scratch.path().string());
    applyMode(config, mode);
    sluice::api::StreamExecutionEnvironment env(std::move(config));
    auto totals = std::make_shared<SinkTotals>();
    // Event times from the epoch on: the watermark is decades behind the wall clock (backlog, FLIP-328).
    env.fromSource(std::make_shared<VectorSource>(events),
                   sluice::api::WatermarkStrategy<Event>::forMonotonousTimestamps().withTimestampAssigner(
                       [](const Event& e) { return e.time; }),
                   "events")
        .keyBy([](const Event& e) { return e.key; })
        .reduce([](const Event& a, const Event& b) {
          Event r = a;
          r.value = a.value + b.value;
          return r;
        })
        .sinkTo(std::make_shared<SummingSink<Event, &Event::value>>(totals));
    const double cpu0 = sluice::bench::processCpuSeconds();
    const auto wall0 = Clock::now();
    env.execute("keyed reduce");
    const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();
    const double cpu = sluice::bench::processCpuSeconds() - cpu0;
    const Totals got{totals->count.load(), totals->sum.load()};
    if (!(got == want)) {
      throw std::runtime_error(fmt::format("keyed reduce ({}, {}): sink saw {} records (sum {}), the loop {} (sum {})",
                                           backend, modeName(mode), got.count, got.sum, want.count, want.sum));
    }
    if (cpu < best.cpu_s) best = Measurement{wall, cpu};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  return sluice::bench::runMain("sluice_backlog_bench", [&] {
    int64_t records = 10'000'000;
    int64_t keys = 100'000;
    int64_t repeat = 1;
    int64_t copies = 91;  // 5,014,555 rows
    sluice::bench::parseCountOptions(argc, argv,
                                     {{"--records", &records}, {"--keys", &keys}, {"--repeat", &repeat},
                                      {"--copies", &copies}});
    if (records < 1 || keys < 1 || repeat < 1 || copies < 1 || copies > 91) {
      throw std::runtime_error("--records, --keys and --repeat must be >= 1, --copies 1..91");
    }
    const sluice::bench::ScratchDirectory scratch("sluice_backlog_bench");
    const Events events = bench_ds::generate(records, keys, 1);

    fmt::print("sluice_backlog_bench: keyed reduce over {} in-memory records, {} keys, -p 1; checkpoints off\n",
               records, keys);
    fmt::print("best of {} runs by CPU s; CPU s = getrusage of the process around execute(); records/CPU-s = input "
               "records / CPU s\n\n",
               repeat);
    fmt::print("{:<22} | {:<8} | {:<7} | {:>10} | {:>7} | {:>7} | {:>14}\n", "job", "backend", "mode", "records",
               "wall s", "CPU s", "records/CPU-s");
    fmt::print("{:-<22}-+-{:-<8}-+-{:-<7}-+-{:->10}-+-{:->7}-+-{:->7}-+-{:->14}\n", "", "", "", "", "", "", "");
    std::map<std::string, double> rocksdb_rate;
    for (const std::string backend : {"rocksdb", "hashmap"}) {
      for (Mode mode : {Mode::kStream, Mode::kBatch, Mode::kBacklog}) {
        const Measurement m = measureReduce(backend, mode, events, keys, static_cast<int>(repeat), scratch);
        const double rate = static_cast<double>(records) / m.cpu_s;
        if (backend == "rocksdb") rocksdb_rate[modeName(mode)] = rate;
        fmt::print("{:<22} | {:<8} | {:<7} | {:>10} | {:>7.2f} | {:>7.2f} | {:>12.2f} M\n", "keyed reduce", backend,
                   modeName(mode), records, m.wall_s, m.cpu_s, rate / 1e6);
        std::fflush(stdout);
      }
    }

    // SQL: GROUP BY over the flights repeated with shifted dates (their watermark lags years behind).
    const std::string csv = (scratch.path() / "flights.csv").string();
    const int64_t rows = sluice::bench::writeRepeatedFlights(
        std::string(SLUICE_SOURCE_DIR) + "/examples/data/flights_2015-01-01_to_04.csv", csv, static_cast<int>(copies));
    const std::string script = fmt::format(sluice::bench::kFlightsTableDdl, csv) +
                               "CREATE TABLE per_origin (origin STRING, flights BIGINT, delay BIGINT) WITH "
                               "('connector' = 'blackhole');\n"
                               "INSERT INTO per_origin SELECT ORIGIN_AIRPORT, COUNT(*), SUM(CAST(DEPARTURE_DELAY AS "
                               "BIGINT)) FROM flights GROUP BY ORIGIN_AIRPORT;\n";
    for (Mode mode : {Mode::kStream, Mode::kBatch, Mode::kBacklog}) {
      sluice::Configuration config;
      config.set("parallelism.default", "1");
      config.set("state.backend.type", "rocksdb");
      config.set("io.tmp.dirs", scratch.path().string());
      applyMode(config, mode);
      const sluice::bench::ScriptRun m = sluice::bench::runScriptBestOf(script, config, static_cast<int>(repeat));
      if (m.rows_read != rows) {
        throw std::runtime_error(fmt::format("SQL GROUP BY ({}): read {} rows of {}", modeName(mode), m.rows_read, rows));
      }
      fmt::print("{:<22} | {:<8} | {:<7} | {:>10} | {:>7.2f} | {:>7.2f} | {:>12.2f} M\n", "SQL GROUP BY origin",
                 "rocksdb", modeName(mode), rows, m.best.seconds, m.best.cpu_seconds,
                 static_cast<double>(rows) / m.best.cpu_seconds / 1e6);
      std::fflush(stdout);
    }
    fmt::print("\nbacklog/batch throughput ratio: {:.2f}\n", rocksdb_rate["backlog"] / rocksdb_rate["batch"]);
    fmt::print("backlog/stream throughput ratio: {:.2f}\n", rocksdb_rate["backlog"] / rocksdb_rate["stream"]);
    return 0;
  });
}

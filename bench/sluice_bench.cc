// sluice_bench: throughput of the engine, run in-process through table::TableEnvironment, printed as a table.
//  (a) the main job's hourly aggregation (examples/flights.sql) over the bundled flights repeated with
//      shifted dates (91 copies = 5,014,555 rows by default) into a blackhole sink, at -p 1 and -p 2;
//  (b) the same aggregation as a plain single-threaded C++ loop over the CSV bytes (the baseline);
//  (c) datagen -> blackhole passthrough, at -p 1 and -p 2.
// Usage: sluice_bench [--copies N] [--datagen-rows N] [--repeat N] [--flights CSV]
// Each figure is the best of --repeat runs (default 2). Wall time includes planning and job start-up.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"
#include "common/config.h"
#include "common/error.h"
#include "flights_baseline.h"
#include "flights_data.h"

namespace {

// The main job's hourly query into a blackhole sink, after the flights table (flights_data.h).
constexpr const char* kHourlyDml = R"sql(
CREATE TABLE hourly_airline_stats (
  window_start TIMESTAMP(3), window_end TIMESTAMP(3), airline STRING, flights BIGINT,
  cancelled INT, avg_dep_delay INT, max_dep_delay INT
) WITH ('connector' = 'blackhole');
INSERT INTO hourly_airline_stats
SELECT window_start, window_end, AIRLINE, COUNT(*), SUM(CANCELLED), AVG(DEPARTURE_DELAY), MAX(DEPARTURE_DELAY)
FROM TABLE(TUMBLE(TABLE flights, DESCRIPTOR(sched_dep), INTERVAL '1' HOUR))
GROUP BY window_start, window_end, AIRLINE;
)sql";

constexpr const char* kDatagenScript = R"sql(
CREATE TABLE gen (id BIGINT, v INT, price DOUBLE) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '{}',
  'rows-per-second' = '1000000000'
);
CREATE TABLE sink (id BIGINT, v INT, price DOUBLE) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT id, v, price FROM gen;
)sql";

// One line of the table. `rows` is the known input size (the rate is computed from it); `engine_in` and
// `engine_out` are what the engine's job summary reports (sources' output, sinks' input), shown as a check.
struct Row {
  std::string name;
  int64_t rows = 0;
  int64_t engine_in = -1;
  int64_t engine_out = -1;
  double seconds = 0;      ///< wall time of the best run
  double cpu_seconds = 0;  ///< CPU time (user + system, all threads) of that run
};

struct Options : sluice::bench::FlightsOptions {
  Options() : FlightsOptions(91, std::string(SLUICE_SOURCE_DIR) + "/examples/data/flights_2015-01-01_to_04.csv") {}
  int64_t datagen_rows = 20'000'000;
};

Options parseArgs(int argc, char** argv) {
  Options o;
  sluice::bench::parseFlags(argc, argv,
                            "usage: sluice_bench [--copies N] [--datagen-rows N] [--repeat N] [--flights CSV]",
                            [&](const std::string& flag, const std::string& value) {
                              if (flag != "--datagen-rows") return o.set(flag, value);
                              o.datagen_rows = std::stoll(value);
                              return true;
                            });
  return o;
}

// Runs `script` at `parallelism`: best wall time of `repeat` runs, with the last run's row counts (sums over
// subtasks of the job's sources and sinks).
Row runEngine(const std::string& name, const std::string& script, int64_t rows, int parallelism, int repeat) {
  sluice::Configuration conf;
  conf.set("parallelism.default", std::to_string(parallelism));
  conf.set("taskmanager.numberOfTaskSlots", std::to_string(parallelism));
  const sluice::bench::ScriptRun run = sluice::bench::runScriptBestOf(script, conf, repeat);
  return Row{name, rows, run.rows_read, run.rows_written, run.best.seconds, run.best.cpu_seconds};
}

Row runBaseline(const std::string& path, int repeat, sluice::bench::BaselineResult& result) {
  // Reading the file (from the page cache) is part of the work, as the engine's source reads it too.
  const sluice::bench::Timing best = sluice::bench::bestOf(repeat, [&] {
    const std::string data = sluice::bench::readWholeFile(path);
    result = sluice::bench::hourlyAggregateBaseline(data);
  });
  return Row{"hourly agg, C++ loop baseline", result.rows, -1, -1, best.seconds, best.cpu_seconds};
}

void printTable(const std::vector<Row>& rows) {
  std::printf("%-30s %10s %8s %8s %13s %12s %11s\n", "benchmark", "rows", "wall s", "cpu s", "rows/s (wall)",
              "engine: in", "engine: out");
  for (const Row& r : rows) {
    std::string in = r.engine_in < 0 ? "-" : std::to_string(r.engine_in);
    std::string out = r.engine_out < 0 ? "-" : std::to_string(r.engine_out);
    std::printf("%-30s %10lld %8.3f %8.3f %13.0f %12s %11s\n", r.name.c_str(), static_cast<long long>(r.rows),
                r.seconds, r.cpu_seconds, r.seconds > 0 ? r.rows / r.seconds : 0.0, in.c_str(), out.c_str());
  }
}

int run(const Options& opts) {
  namespace fs = std::filesystem;
  const sluice::bench::ScratchDirectory scratch("sluice-bench");
  const fs::path& dir = scratch.path();

  const std::string big = (dir / "flights.csv").string();
  std::fprintf(stderr, "writing %d copies of %s ...\n", opts.copies, opts.flights_csv.c_str());
  const int64_t input_rows = sluice::bench::writeRepeatedFlights(opts.flights_csv, big, opts.copies);
  std::fprintf(stderr, "%lld rows in %s (%.0f MB)\n", static_cast<long long>(input_rows), big.c_str(),
               static_cast<double>(fs::file_size(big)) / 1e6);

  std::vector<Row> rows;
  sluice::bench::BaselineResult baseline;
  std::fprintf(stderr, "baseline ...\n");
  rows.push_back(runBaseline(big, opts.repeat, baseline));
  const std::string hourly = fmt::format(sluice::bench::kFlightsTableDdl, big) + kHourlyDml;
  for (int p : {1, 2}) {
    std::fprintf(stderr, "engine hourly -p %d ...\n", p);
    rows.push_back(runEngine(fmt::format("hourly agg, engine -p {}", p), hourly, input_rows, p, opts.repeat));
  }
  const std::string datagen = fmt::format(kDatagenScript, opts.datagen_rows);
  for (int p : {1, 2}) {
    std::fprintf(stderr, "engine datagen -p %d ...\n", p);
    rows.push_back(
        runEngine(fmt::format("datagen -> blackhole, -p {}", p), datagen, opts.datagen_rows, p, opts.repeat));
  }

  printTable(rows);
  const Row& base = rows[0];
  const Row& engine1 = rows[1];
  std::printf("\nengine -p 1 / baseline: %.2fx the wall time, %.2fx the CPU time (%.0f vs %.0f rows/s)\n",
              engine1.seconds / base.seconds, engine1.cpu_seconds / base.cpu_seconds, engine1.rows / engine1.seconds,
              base.rows / base.seconds);
  // Cross-checks of the engine's job summary: every input row read once, and for the hourly job one output
  // row per (hour, airline) group as the baseline found. A mismatch is reported, not fatal.
  auto check = [](const Row& r, int64_t want_in, int64_t want_out) {
    if (r.engine_in != want_in || r.engine_out != want_out)
      std::printf("MISMATCH: %s: the engine reports %lld rows read, %lld written; expected %lld and %lld\n",
                  r.name.c_str(), static_cast<long long>(r.engine_in), static_cast<long long>(r.engine_out),
                  static_cast<long long>(want_in), static_cast<long long>(want_out));
  };
  check(rows[1], input_rows, baseline.groups);
  check(rows[2], input_rows, baseline.groups);
  check(rows[3], opts.datagen_rows, opts.datagen_rows);
  check(rows[4], opts.datagen_rows, opts.datagen_rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return sluice::bench::runMain("sluice_bench", [&] { return run(parseArgs(argc, argv)); });
}

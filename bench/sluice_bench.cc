// sluice_bench: throughput of the engine, run in-process through table::TableEnvironment, printed as a table.
//  (a) the main job's hourly aggregation (examples/flights.sql) over the bundled flights repeated with
//      shifted dates (91 copies = 5,014,555 rows by default) into a blackhole sink, at -p 1 and -p 2;
//  (b) the same aggregation as a plain single-threaded C++ loop over the CSV bytes (the baseline);
//  (c) datagen -> blackhole passthrough, at -p 1 and -p 2.
// Usage: sluice_bench [--copies N] [--datagen-rows N] [--repeat N] [--flights CSV]
// Each figure is the best of --repeat runs (default 2). Wall time includes planning and job start-up.

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

#include <sys/resource.h>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "flights_baseline.h"
#include "flights_data.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"

namespace {

using Clock = std::chrono::steady_clock;

// The main job's source DDL (examples/flights.sql) with the path left open, and its hourly query into a
// blackhole sink.
constexpr const char* kFlightsDdl = R"sql(
CREATE TABLE flights (
  `YEAR` INT, `MONTH` INT, `DAY` INT, DAY_OF_WEEK INT, AIRLINE STRING, FLIGHT_NUMBER INT,
  TAIL_NUMBER STRING, ORIGIN_AIRPORT STRING, DESTINATION_AIRPORT STRING, SCHEDULED_DEPARTURE STRING,
  DEPARTURE_TIME STRING, DEPARTURE_DELAY INT, TAXI_OUT INT, WHEELS_OFF STRING, SCHEDULED_TIME INT,
  ELAPSED_TIME INT, AIR_TIME INT, DISTANCE INT, WHEELS_ON STRING, TAXI_IN INT, SCHEDULED_ARRIVAL STRING,
  ARRIVAL_TIME STRING, ARRIVAL_DELAY INT, DIVERTED INT, CANCELLED INT, CANCELLATION_REASON STRING,
  AIR_SYSTEM_DELAY INT, SECURITY_DELAY INT, AIRLINE_DELAY INT, LATE_AIRCRAFT_DELAY INT, WEATHER_DELAY INT,
  sched_dep AS TO_TIMESTAMP(
      CAST(`YEAR` AS STRING) || '-' || LPAD(CAST(`MONTH` AS STRING), 2, '0') || '-' ||
      LPAD(CAST(`DAY` AS STRING), 2, '0') || ' ' ||
      SUBSTRING(SCHEDULED_DEPARTURE FROM 1 FOR 2) || ':' ||
      SUBSTRING(SCHEDULED_DEPARTURE FROM 3 FOR 2) || ':00'),
  WATERMARK FOR sched_dep AS sched_dep - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = '{}',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);
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

// CPU time of the whole process so far (user + system, every thread), in seconds.
double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Options {
  int copies = 91;
  int64_t datagen_rows = 20'000'000;
  int repeat = 2;
  std::string flights_csv = std::string(SLUICE_SOURCE_DIR) + "/examples/data/flights_2015-01-01_to_04.csv";
};

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value after " + arg);
      return argv[++i];
    };
    if (arg == "--copies") {
      o.copies = std::stoi(value());
    } else if (arg == "--datagen-rows") {
      o.datagen_rows = std::stoll(value());
    } else if (arg == "--repeat") {
      o.repeat = std::max(1, std::stoi(value()));
    } else if (arg == "--flights") {
      o.flights_csv = value();
    } else {
      throw std::runtime_error("usage: sluice_bench [--copies N] [--datagen-rows N] [--repeat N] [--flights CSV]");
    }
  }
  if (o.copies < 1 || o.copies > 91) throw std::runtime_error("--copies must be within 1..91 (dates stay in 2015)");
  return o;
}

// Runs `script` on a fresh TableEnvironment at `parallelism`; best wall time of `repeat` runs, with the
// last run's row counts (sums over subtasks of the job's sources and sinks).
Row runEngine(const std::string& name, const std::string& script, int64_t rows, int parallelism, int repeat) {
  auto factories = std::make_shared<sluice::table::FactoryRegistry>();
  sluice::connectors::registerBuiltinConnectors(*factories);
  Row row{name, rows};
  row.seconds = 1e300;
  for (int r = 0; r < repeat; ++r) {
    sluice::Configuration conf;
    conf.set("parallelism.default", std::to_string(parallelism));
    conf.set("taskmanager.numberOfTaskSlots", std::to_string(parallelism));
    sluice::table::TableEnvironment env(conf, factories);
    const double cpu_start = processCpuSeconds();
    const auto start = Clock::now();
    env.executeScript(script);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds < row.seconds) {
      row.seconds = seconds;
      row.cpu_seconds = processCpuSeconds() - cpu_start;
    }
    if (env.jobs().empty()) throw std::runtime_error("the benchmark script ran no job");
    row.engine_in = env.jobs().back().rows_read;
    row.engine_out = env.jobs().back().rows_written;
  }
  return row;
}

Row runBaseline(const std::string& path, int repeat, sluice::bench::BaselineResult& result) {
  Row row{"hourly agg, C++ loop baseline"};
  row.seconds = 1e300;
  for (int r = 0; r < repeat; ++r) {
    // Reading the file (from the page cache) is part of the work, as the engine's source reads it too.
    const double cpu_start = processCpuSeconds();
    const auto start = Clock::now();
    const std::string data = sluice::bench::readWholeFile(path);
    result = sluice::bench::hourlyAggregateBaseline(data);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds < row.seconds) {
      row.seconds = seconds;
      row.cpu_seconds = processCpuSeconds() - cpu_start;
    }
  }
  row.rows = result.rows;
  return row;
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
  std::string tmpl = (fs::temp_directory_path() / "sluice-bench.XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
  const fs::path dir = tmpl;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};

  const std::string big = (dir / "flights.csv").string();
  std::fprintf(stderr, "writing %d copies of %s ...\n", opts.copies, opts.flights_csv.c_str());
  const int64_t input_rows = sluice::bench::writeRepeatedFlights(opts.flights_csv, big, opts.copies);
  std::fprintf(stderr, "%lld rows in %s (%.0f MB)\n", static_cast<long long>(input_rows), big.c_str(),
               static_cast<double>(fs::file_size(big)) / 1e6);

  std::vector<Row> rows;
  sluice::bench::BaselineResult baseline;
  std::fprintf(stderr, "baseline ...\n");
  rows.push_back(runBaseline(big, opts.repeat, baseline));
  const std::string hourly = fmt::format(kFlightsDdl, big);
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
  try {
    return run(parseArgs(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice_bench: %s\n", e.what());
    return 2;
  }
}

// sluice_kafka_bench: throughput of the Kafka source against the in-process mock cluster, printed as a table
// (not a test).
//  - the bundled flights repeated with shifted dates are produced to two topics of 32 partitions: as CSV lines
//    (--copies, default 10 = 551,050 rows, 56 MB) and as JSON objects (--json-copies, default 2 = 110,210 rows,
//    66 MB). 32 partitions because librdkafka's mock keeps only about 5 MB per partition (the bench checks
//    that every row is read back);
//  - for each value format and `scan.parallelism` 1, 2, 3 (default parallelism 2), two bounded jobs run:
//    Kafka -> blackhole (every column decoded) and Kafka -> GROUP BY AIRLINE (COUNT, SUM, MAX) -> blackhole.
// Rates are rows (and message bytes) of the topic per second of wall time, planning and job start-up
// included; the best of --repeat runs (default 2). The job summary's rows read are checked against the
// topic's row count (a mismatch is printed).
// Usage: sluice_kafka_bench [--copies N] [--json-copies N] [--repeat N] [--flights CSV]

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"
#include "common/config.h"
#include "connectors/kafka/mock_cluster.h"
#include "flights_data.h"

namespace {

using sluice::connectors::kafka::KafkaRecord;
using sluice::connectors::kafka::MockKafkaCluster;

constexpr const char* kColumns[] = {"YEAR",
                                    "MONTH",
                                    "DAY",
                                    "DAY_OF_WEEK",
                                    "AIRLINE",
                                    "FLIGHT_NUMBER",
                                    "TAIL_NUMBER",
                                    "ORIGIN_AIRPORT",
                                    "DESTINATION_AIRPORT",
                                    "SCHEDULED_DEPARTURE",
                                    "DEPARTURE_TIME",
                                    "DEPARTURE_DELAY",
                                    "TAXI_OUT",
                                    "WHEELS_OFF",
                                    "SCHEDULED_TIME",
                                    "ELAPSED_TIME",
                                    "AIR_TIME",
                                    "DISTANCE",
                                    "WHEELS_ON",
                                    "TAXI_IN",
                                    "SCHEDULED_ARRIVAL",
                                    "ARRIVAL_TIME",
                                    "ARRIVAL_DELAY",
                                    "DIVERTED",
                                    "CANCELLED",
                                    "CANCELLATION_REASON",
                                    "AIR_SYSTEM_DELAY",
                                    "SECURITY_DELAY",
                                    "AIRLINE_DELAY",
                                    "LATE_AIRCRAFT_DELAY",
                                    "WEATHER_DELAY"};
// The STRING columns of examples/flights.sql (the others are INT).
bool isStringColumn(int c) {
  return c == 4 || c == 6 || c == 7 || c == 8 || c == 9 || c == 10 || c == 13 || c == 18 || c == 20 || c == 21 ||
         c == 25;
}

// "`YEAR` INT, `MONTH` INT, ..., WEATHER_DELAY INT": the physical columns of examples/flights.sql.
std::string columnList() {
  std::string out;
  for (int c = 0; c < 31; ++c)
    out += fmt::format("{}`{}` {}", c ? ", " : "", kColumns[c], isStringColumn(c) ? "STRING" : "INT");
  return out;
}

constexpr const char* kTableDdl = R"sql(
CREATE TABLE flights ({columns}) WITH (
  'connector' = 'kafka',
  'topic' = '{topic}',
  'properties.bootstrap.servers' = '{bootstrap}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'scan.parallelism' = '{parallelism}',
  {format}
);
)sql";

constexpr const char* kPassthrough = R"sql(
CREATE TABLE sink ({columns}) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT * FROM flights;
)sql";

constexpr const char* kAggregate = R"sql(
CREATE TABLE sink (airline STRING, flights BIGINT, delay BIGINT, longest INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT AIRLINE, COUNT(*), SUM(CAST(DEPARTURE_DELAY AS BIGINT)), MAX(DISTANCE) FROM flights GROUP BY AIRLINE;
)sql";

struct Row {
  std::string name;
  int64_t rows = 0;
  int64_t bytes = 0;
  int64_t engine_in = -1;
  double seconds = 0;
  double cpu_seconds = 0;
};

constexpr int kPartitions = 32;

struct Options : sluice::bench::FlightsOptions {
  Options() : FlightsOptions(10, std::string(SLUICE_SOURCE_DIR) + "/examples/data/flights_2015-01-01_to_04.csv") {}
  int json_copies = 2;
};

Options parseArgs(int argc, char** argv) {
  Options o;
  sluice::bench::parseFlags(argc, argv,
                            "usage: sluice_kafka_bench [--copies N] [--json-copies N] [--repeat N] [--flights CSV]",
                            [&](const std::string& flag, const std::string& value) {
                              if (flag != "--json-copies") return o.set(flag, value);
                              o.json_copies = std::stoi(value);
                              return true;
                            });
  if (o.json_copies < 1 || o.json_copies > 91)
    throw std::runtime_error("--json-copies must be within 1..91 (dates stay in 2015)");
  return o;
}

/// A flights CSV line as a JSON object with the table's column names (empty field: null).
std::string toJson(const std::string& line) {
  std::string out = "{";
  size_t start = 0;
  for (int c = 0; c < 31; ++c) {
    size_t end = line.find(',', start);
    if (end == std::string::npos) end = line.size();
    const std::string field = line.substr(start, end - start);
    if (c) out += ',';
    out += fmt::format("\"{}\":", kColumns[c]);
    if (field.empty())
      out += "null";
    else if (isStringColumn(c))
      out += "\"" + field + "\"";
    else
      out += field;
    start = end + 1;
  }
  return out + "}";
}

Row runJob(const std::string& name, const std::string& script, int64_t rows, int64_t bytes, int repeat) {
  sluice::Configuration conf;
  conf.set("parallelism.default", "2");
  const sluice::bench::ScriptRun run = sluice::bench::runScriptBestOf(script, conf, repeat);
  return Row{name, rows, bytes, run.rows_read, run.best.seconds, run.best.cpu_seconds};
}

int run(const Options& opts) {
  const sluice::bench::ScratchDirectory scratch("sluice-kafka-bench");
  const std::filesystem::path& dir = scratch.path();
  MockKafkaCluster cluster(1);
  struct Topic {
    std::string name, format;
    int copies = 0;
    int64_t rows = 0, bytes = 0;
  };
  std::vector<Topic> topics = {{"flights_csv", "'format' = 'csv', 'csv.ignore-parse-errors' = 'true'", opts.copies},
                               {"flights_json", "'format' = 'json'", opts.json_copies}};
  for (Topic& t : topics) {
    const std::string file = (dir / (t.name + ".csv")).string();
    sluice::bench::writeRepeatedFlights(opts.flights_csv, file, t.copies);
    cluster.createTopic(t.name, kPartitions);
    std::ifstream in(file);
    std::vector<KafkaRecord> records;
    std::string line;
    while (std::getline(in, line)) {
      KafkaRecord r;
      r.value = t.name == "flights_json" ? toJson(line) : line;
      r.partition = static_cast<int>(records.size() % kPartitions);  // even: the mock keeps ~5 MB a partition
      t.bytes += static_cast<int64_t>(r.value->size());
      records.push_back(std::move(r));
    }
    t.rows = static_cast<int64_t>(records.size());
    std::fprintf(stderr, "producing %zu messages (%.1f MB) to %s ...\n", records.size(), t.bytes / 1e6, t.name.c_str());
    cluster.produce(t.name, records, 600000);
  }

  std::vector<Row> rows;
  for (const Topic& t : topics) {
    for (const char* job : {"blackhole", "group by"}) {
      for (int p : {1, 2, 3}) {
        const std::string ddl = fmt::format(kTableDdl, fmt::arg("columns", columnList()), fmt::arg("topic", t.name),
                                            fmt::arg("bootstrap", cluster.bootstrapServers()),
                                            fmt::arg("parallelism", p), fmt::arg("format", t.format));
        const std::string name =
            fmt::format("{} -> {}, scan.parallelism {}", t.name == "flights_csv" ? "csv" : "json", job, p);
        std::fprintf(stderr, "%s ...\n", name.c_str());
        const std::string query =
            job[0] == 'b' ? fmt::format(kPassthrough, fmt::arg("columns", columnList())) : std::string(kAggregate);
        rows.push_back(runJob(name, ddl + query, t.rows, t.bytes, opts.repeat));
      }
    }
  }

  std::printf("Kafka source on the mock cluster (topics of %d partitions), default parallelism 2, best of %d\n",
              kPartitions, opts.repeat);
  std::printf("%-40s %9s %8s %8s %12s %8s\n", "job", "rows", "wall s", "cpu s", "rows/s", "MB/s");
  for (const Row& r : rows) {
    std::printf("%-40s %9lld %8.3f %8.3f %12.0f %8.1f\n", r.name.c_str(), static_cast<long long>(r.rows), r.seconds,
                r.cpu_seconds, r.rows / r.seconds, r.bytes / 1e6 / r.seconds);
    if (r.engine_in != r.rows)
      std::printf("MISMATCH: %s read %lld rows, the topic holds %lld\n", r.name.c_str(),
                  static_cast<long long>(r.engine_in), static_cast<long long>(r.rows));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return sluice::bench::runMain("sluice_kafka_bench", [&] { return run(parseArgs(argc, argv)); });
}

#pragma once
/// Benchmark input: the bundled flights file (4 days, 55,105 rows) repeated with shifted dates into one
/// large CSV, so the main job's hourly aggregation runs over millions of rows of real data.

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::bench {

/// The main job's source table (examples/flights.sql) with its path left open for fmt::format.
inline constexpr const char* kFlightsTableDdl = R"sql(
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
)sql";

/// Writes `copies` copies of the CSV at `source_path` to `target_path`. Copy k moves every row 4*k days
/// later (YEAR/MONTH/DAY and DAY_OF_WEEK rewritten; the input must be 2015-01-01..04), so the output stays
/// sorted by scheduled departure and no row is late for the job's 1-minute watermark. `copies` <= 91 keeps
/// every date inside 2015. Returns the number of rows written. Throws std::runtime_error on I/O errors or
/// an unexpected input row. Single-threaded.
int64_t writeRepeatedFlights(const std::string& source_path, const std::string& target_path, int copies);

/// Reads a whole file into memory. Throws std::runtime_error when it cannot be read.
std::string readWholeFile(const std::string& path);

/// A read-only memory mapping of a whole file (as the engine's filesystem source reads files). Throws
/// std::runtime_error when the file cannot be opened or mapped. Not copyable.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view data() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sluice::bench

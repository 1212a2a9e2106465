#pragma once
// The logic of the two DataStream examples, shared by their programs and the tests that check them.
//
// Input: the bundled flights CSV (examples/data/README.md): no header, 31 comma-separated columns;
// column 1-3 the date, 5 the airline, 10 the scheduled departure "HHmm" (the event time), 12 the departure
// delay in minutes (empty for cancelled flights).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "api/datastream.h"
#include "common/error.h"
#include "graph/plan.h"

namespace sluice::examples {

/// The comma-separated fields of a line (no quoting in this file).
inline std::vector<std::string_view> splitCsv(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

inline int64_t toInt(std::string_view s) { return std::strtoll(std::string(s).c_str(), nullptr, 10); }

/// One departed flight: airline, scheduled departure (ms since the epoch, UTC wall clock) and delay (min).
struct Departure {
  std::string airline;
  int64_t scheduled_ms = 0;
  int64_t delay_min = 0;
};
SLUICE_TYPE(Departure, airline, scheduled_ms, delay_min)

/// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
inline int64_t daysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/// The departure of a CSV line, or nullopt for a cancelled flight (no delay) or a short line.
inline std::optional<Departure> parseDeparture(const std::string& line) {
  const auto f = splitCsv(line);
  if (f.size() < 12 || f[11].empty() || f[9].size() != 4) return std::nullopt;
  const int64_t day = daysFromCivil(toInt(f[0]), toInt(f[1]), toInt(f[2]));
  const int64_t hhmm = toInt(f[9]);
  const int64_t ms = ((day * 24 + hhmm / 100) * 60 + hhmm % 100) * 60 * 1000;
  return Departure{std::string(f[4]), ms, toInt(f[11])};
}

/// "2015-01-01T05:00" for an hour start in ms.
inline std::string formatHour(int64_t ms) {
  int64_t days = ms / 86400000;
  const int64_t hour = (ms % 86400000) / 3600000;
  // civil_from_days
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp + (mp < 10 ? 3 : -9);
  const int64_t y = yoe + era * 400 + (m <= 2);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:00", y, m, d, hour);
}

/// Flights per airline (word count): (airline, count), one final row per airline in BATCH mode.
inline api::DataStream<std::pair<std::string, int64_t>> flightsPerAirline(api::StreamExecutionEnvironment& env,
                                                                          const std::string& csv_path) {
  using Count = std::pair<std::string, int64_t>;
  return env
      .fromSource(std::make_shared<api::TextLineSource>(csv_path), api::WatermarkStrategy<std::string>::noWatermarks(),
                  "flights")
      .map([](const std::string& line) { return Count{std::string(splitCsv(line).at(4)), 1}; })
      .name("airline")
      .keyBy([](const Count& c) { return c.first; })
      .sum(&Count::second)
      .name("count");
}

/// Max of the departure delays of a window.
struct MaxDelay : api::AggregateFunction<Departure, int64_t, int64_t> {
  int64_t createAccumulator() override { return INT64_MIN; }
  int64_t add(const Departure& d, int64_t acc) override { return std::max(acc, d.delay_min); }
  int64_t getResult(const int64_t& acc) override { return acc; }
  int64_t merge(int64_t a, int64_t b) override { return std::max(a, b); }
};

using HourlyMax = std::tuple<std::string, std::string, int64_t>;  ///< airline, hour, max delay (min)

/// Adds the window's hour to the aggregated maximum.
struct WithHour : api::ProcessWindowFunction<int64_t, HourlyMax, std::string> {
  void process(const std::string& airline, Context& ctx, const std::vector<int64_t>& max,
               api::Collector<HourlyMax>& out) override {
    out.collect(HourlyMax{airline, formatHour(ctx.window().getStart()), max.at(0)});
  }
};

/// Max departure delay per airline per hour of scheduled departure: event-time tumbling windows of one
/// hour, watermarks trailing the largest timestamp by `out_of_orderness_ms`.
inline api::DataStream<HourlyMax> delaysWindow(api::StreamExecutionEnvironment& env, const std::string& csv_path,
                                               int64_t out_of_orderness_ms) {
  return env
      .fromSource(std::make_shared<api::TextLineSource>(csv_path), api::WatermarkStrategy<std::string>::noWatermarks(),
                  "flights")
      .flatMap<Departure>([](const std::string& line, api::Collector<Departure>& out) {
        if (auto d = parseDeparture(line)) out.collect(std::move(*d));
      })
      .name("parse")
      .assignTimestampsAndWatermarks(api::WatermarkStrategy<Departure>::forBoundedOutOfOrderness(out_of_orderness_ms)
                                         .withTimestampAssigner([](const Departure& d) { return d.scheduled_ms; }))
      .keyBy([](const Departure& d) { return d.airline; })
      .window(api::TumblingEventTimeWindows::of(std::chrono::hours(1)))
      .aggregate(MaxDelay{}, WithHour{})
      .name("max delay per hour");
}

/// The command line of an example program: `[-p N] [-D key=value]... [--plan[=json|dot]] [CSV]`.
struct ExampleArgs {
  Configuration config;  ///< -p (parallelism.default) and -D options
  std::string path;      ///< the input CSV (the default given to parseExampleArgs when absent)
  std::string plan;      ///< "json" (--plan) or "dot" (--plan=dot): print the JobGraph instead of running; "" runs
};

/// Parses the command line of an example program. Throws UserError on an unknown option or a missing value
/// (ConfigError from a malformed -D).
inline ExampleArgs parseExampleArgs(int argc, char** argv, std::string default_path) {
  ExampleArgs args;
  args.path = std::move(default_path);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if ((a == "-p" || a == "--parallelism") && has_value) {
      args.config.set("parallelism.default", argv[++i]);
    } else if (a == "-D" && has_value) {
      args.config.setFromKeyValue(argv[++i]);
    } else if (a == "--plan" || a == "--plan=json") {
      args.plan = "json";
    } else if (a == "--plan=dot") {
      args.plan = "dot";
    } else if (!a.empty() && a[0] == '-') {
      throw UserError(fmt::format("unknown or incomplete option '{}' (usage: {} [-p N] [-D key=value] [--plan[=json|dot]] [CSV])",
                                  a, argv[0]));
    } else {
      args.path = a;
    }
  }
  return args;
}

/// With --plan prints the job's JobGraph to stdout: Flink's plan JSON (env.getExecutionPlan()), or with
/// --plan=dot the same plan as Graphviz DOT (the printer of `sluice explain --format=dot`). Otherwise runs
/// the job and reports its wall time on stderr. Rethrows a failure of the job.
inline void planOrExecute(api::StreamExecutionEnvironment& env, const ExampleArgs& args, const std::string& name) {
  if (!args.plan.empty()) {
    std::string plan = env.getExecutionPlan(name);
    if (args.plan == "dot") plan = graph::planJsonToDot({plan});
    if (plan.empty() || plan.back() != '\n') plan.push_back('\n');
    std::fputs(plan.c_str(), stdout);
    return;
  }
  const auto result = env.execute(name);
  std::fprintf(stderr, "Job '%s' finished in %lld ms\n", result.getJobName().c_str(),
               static_cast<long long>(result.getNetRuntime()));
}

}  // namespace sluice::examples

#pragma once
// Helpers shared by the SQL benchmarks (sluice_bench, sluice_kafka_bench): CPU time, a scratch directory,
// and the best of several runs of a SQL script on a fresh TableEnvironment. Bench code only.

#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "common/config.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"

namespace sluice::bench {

/// CPU time of the whole process so far (user + system, every thread), in seconds.
inline double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// A fresh directory `<system temp>/<prefix>.XXXXXX`, removed with its contents on destruction. Throws
/// std::runtime_error when it cannot be created.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory " + tmpl);
    path_ = tmpl;
  }
  ~ScratchDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// A benchmark's main: `body`'s exit status, or 2 with "<name>: <error>" on stderr when it throws.
template <class Fn>
int runMain(const char* name, Fn&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 2;
  }
}

/// Reads the `--flag value` pairs of the command line, calling `set(flag, value)` for each; `set` returns
/// false for a flag it does not know. Throws std::runtime_error(`usage`) for an unknown flag or a missing
/// value (and lets what `set` throws through).
inline void parseFlags(int argc, char** argv, const std::string& usage,
                       const std::function<bool(const std::string& flag, const std::string& value)>& set) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc || !set(flag, argv[i + 1])) throw std::runtime_error(usage);
    ++i;
  }
}

/// The options of the benchmarks over the bundled flights: `--copies N` (copies of the flights, dates shifted,
/// 1..91), `--repeat N` (runs per figure, the best is shown) and `--flights CSV` (the file to copy).
struct FlightsOptions {
  explicit FlightsOptions(int default_copies, std::string default_flights_csv)
      : copies(default_copies), flights_csv(std::move(default_flights_csv)) {}
  int copies;
  int repeat = 2;
  std::string flights_csv;

  /// Sets the option `flag` to `value`; false when `flag` is none of these. Throws std::invalid_argument on a
  /// value that is no number, std::runtime_error on copies outside 1..91 (dates stay in 2015).
  bool set(const std::string& flag, const std::string& value) {
    if (flag == "--copies") {
      copies = std::stoi(value);
      if (copies < 1 || copies > 91) throw std::runtime_error("--copies must be within 1..91 (dates stay in 2015)");
    } else if (flag == "--repeat") {
      repeat = std::max(1, std::stoi(value));
    } else if (flag == "--flights") {
      flights_csv = value;
    } else {
      return false;
    }
    return true;
  }
};

/// Wall and CPU time of one run.
struct Timing {
  double seconds = 0;      ///< wall time
  double cpu_seconds = 0;  ///< CPU time of the process during the run (all threads)
};

/// Runs `fn` `repeat` (>= 1) times; the timing of the fastest run (by wall time).
template <class Fn>
Timing bestOf(int repeat, Fn&& fn) {
  Timing best{1e300, 0};
  for (int r = 0; r < repeat; ++r) {
    const double cpu_start = processCpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    fn();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds < best.seconds) best = Timing{seconds, processCpuSeconds() - cpu_start};
  }
  return best;
}

/// The best of several runs of one SQL script, with the last run's job summary.
struct ScriptRun {
  Timing best;                ///< the fastest run, planning and job start-up included
  int64_t rows_read = -1;     ///< the last job's rows read by its sources
  int64_t rows_written = -1;  ///< the last job's rows written by its sinks
};

/// Runs `script` `repeat` (>= 1) times, each on a fresh TableEnvironment over `conf` with the built-in
/// connectors. Throws what the script throws, and std::runtime_error when it ran no job.
inline ScriptRun runScriptBestOf(const std::string& script, const Configuration& conf, int repeat) {
  auto factories = std::make_shared<table::FactoryRegistry>();
  connectors::registerBuiltinConnectors(*factories);
  ScriptRun run;
  run.best = bestOf(repeat, [&] {
    table::TableEnvironment env(conf, factories);
    env.executeScript(script);
    if (env.jobs().empty()) throw std::runtime_error("the benchmark script ran no job");
    run.rows_read = env.jobs().back().rows_read;
    run.rows_written = env.jobs().back().rows_written;
  });
  return run;
}

}  // namespace sluice::bench

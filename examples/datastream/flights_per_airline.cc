// Flights per airline: the word count of the flights data, as a DataStream program.
//
//   example_flights_per_airline [-p N] [-D key=value] [examples/data/flights_2015-01-01_to_04.csv]
//
// Reads the CSV line by line, maps each flight to (airline, 1), keys by airline and sums the counts.
// It runs in BATCH mode, so the keyed sum prints one final (airline,count) line per airline, prefixed
// with the printing subtask ("2> ") when the parallelism is above 1.
#include <cstdio>
#include <exception>

#include "flights_jobs.h"

int main(int argc, char** argv) {
  std::string path = "examples/data/flights_2015-01-01_to_04.csv";
  try {
    auto env = sluice::examples::envFromArgs(argc, argv, path);
    env.setRuntimeMode(sluice::api::RuntimeExecutionMode::BATCH);
    sluice::examples::flightsPerAirline(env, path).print();
    const auto result = env.execute("flights per airline");
    std::fprintf(stderr, "Job '%s' finished in %lld ms\n", result.getJobName().c_str(),
                 static_cast<long long>(result.getNetRuntime()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

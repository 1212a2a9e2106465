// Flights per airline: the word count of the flights data, as a DataStream program.
//
//   example_flights_per_airline [-p N] [-D key=value] [--plan[=json|dot]] [examples/data/flights_2015-01-01_to_04.csv]
//
// --plan prints the JobGraph as JSON (env.getExecutionPlan(), the shape of Flink's /jobs/:id/plan) instead
// of running the job; --plan=dot prints it as Graphviz DOT.
//
// Reads the CSV line by line, maps each flight to (airline, 1), keys by airline and sums the counts.
// It runs in BATCH mode, so the keyed sum prints one final (airline,count) line per airline, prefixed
// with the printing subtask ("2> ") when the parallelism is above 1.
#include <cstdio>
#include <exception>

#include "flights_jobs.h"

int main(int argc, char** argv) {
  try {
    const auto args = sluice::examples::parseExampleArgs(argc, argv, "examples/data/flights_2015-01-01_to_04.csv");
    sluice::api::StreamExecutionEnvironment env(args.config);
    env.setRuntimeMode(sluice::api::RuntimeExecutionMode::BATCH);
    sluice::examples::flightsPerAirline(env, args.path).print();
    sluice::examples::planOrExecute(env, args, "flights per airline");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

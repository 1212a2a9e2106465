// Max departure delay per airline per hour: a keyed event-time tumbling window, as a DataStream program.
//
//   example_delays_window [-p N] [-D key=value] [--plan[=json|dot]] [examples/data/flights_2015-01-01_to_04.csv]
//
// --plan prints the JobGraph as JSON (env.getExecutionPlan(), the shape of Flink's /jobs/:id/plan) instead
// of running the job; --plan=dot prints it as Graphviz DOT.
//
// Parses departed flights (cancelled ones have no delay and are skipped), stamps each with its scheduled
// departure as event time (watermarks trail by 5 minutes), keys by airline and keeps the maximum delay of
// every one-hour window. Prints (airline,hour,max_delay_minutes) lines as windows close.
#include <cstdio>
#include <exception>

#include "flights_jobs.h"

int main(int argc, char** argv) {
  try {
    const auto args = sluice::examples::parseExampleArgs(argc, argv, "examples/data/flights_2015-01-01_to_04.csv");
    sluice::api::StreamExecutionEnvironment env(args.config);
    sluice::examples::delaysWindow(env, args.path, 5 * 60 * 1000).print();
    sluice::examples::planOrExecute(env, args, "max departure delay per airline and hour");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

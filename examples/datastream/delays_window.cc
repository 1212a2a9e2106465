// Max departure delay per airline per hour: a keyed event-time tumbling window, as a DataStream program.
//
//   example_delays_window [-p N] [-D key=value] [examples/data/flights_2015-01-01_to_04.csv]
//
// Parses departed flights (cancelled ones have no delay and are skipped), stamps each with its scheduled
// departure as event time (watermarks trail by 5 minutes), keys by airline and keeps the maximum delay of
// every one-hour window. Prints (airline,hour,max_delay_minutes) lines as windows close.
#include <cstdio>
#include <exception>

#include "flights_jobs.h"

int main(int argc, char** argv) {
  std::string path = "examples/data/flights_2015-01-01_to_04.csv";
  try {
    auto env = sluice::examples::envFromArgs(argc, argv, path);
    sluice::examples::delaysWindow(env, path, 5 * 60 * 1000).print();
    const auto result = env.execute("max departure delay per airline and hour");
    std::fprintf(stderr, "Job '%s' finished in %lld ms\n", result.getJobName().c_str(),
                 static_cast<long long>(result.getNetRuntime()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

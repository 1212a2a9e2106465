#pragma once
// Helpers for DataStream API tests: an environment with a given parallelism and sorted results.

#include <algorithm>
#include <vector>

#include "api/datastream.h"

namespace sluice::api::testing {

inline StreamExecutionEnvironment makeEnv(int parallelism) {
  Configuration config;
  config.set("parallelism.default", std::to_string(parallelism));
  return StreamExecutionEnvironment(std::move(config));
}

template <typename T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace sluice::api::testing

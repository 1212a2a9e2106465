#include "runtime/operators/functions.h"
#include "runtime/operators/source_sink_operators.h"

#include <mutex>
#include <unordered_map>

namespace sluice::runtime {

int outputTagId(const std::string& id) {
  static std::mutex mu;
  static std::unordered_map<std::string, int> ids;
  std::lock_guard<std::mutex> lock(mu);
  auto it = ids.find(id);
  if (it != ids.end()) return it->second;
  const int tag = static_cast<int>(ids.size()) + 1;
  ids.emplace(id, tag);
  return tag;
}

void AccumulatorRegistry::merge(const std::string& name, int64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  values_[name] += value;
}

std::map<std::string, int64_t> AccumulatorRegistry::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_;
}

std::mutex& printMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace sluice::runtime

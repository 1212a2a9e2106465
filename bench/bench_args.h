#pragma once
// Command-line parsing shared by the benchmarks.

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

namespace sluice::bench {

/// `value` as a positive integer; throws std::invalid_argument naming `flag` otherwise.
inline int64_t parseCount(const std::string& flag, const char* value) {
  char* end = nullptr;
  const long long v = std::strtoll(value, &end, 10);
  if (end == value || *end != '\0' || v < 1) {
    throw std::invalid_argument(fmt::format("{} needs a positive integer, got '{}'", flag, value));
  }
  return v;
}

/// Reads `--flag N` pairs from the command line into the counts of `flags` (N a positive integer). Throws
/// std::invalid_argument naming an unknown or incomplete option, or a bad value.
inline void parseCountOptions(int argc, char** argv, const std::map<std::string, int64_t*>& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto it = flags.find(a);
    if (it == flags.end() || i + 1 >= argc) {
      throw std::invalid_argument(fmt::format("unknown or incomplete option '{}'", a));
    }
    *it->second = parseCount(a, argv[++i]);
  }
}

}  // namespace sluice::bench

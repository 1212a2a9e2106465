#include "common/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/error.h"

namespace sluice {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<ConfigOptionSpec>> specs;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

[[noreturn]] void badValue(const std::string& key, const std::string& value, const std::string& why) {
  throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': {}", value, key, why));
}

template <typename I>
I parseInteger(const std::string& key, const std::string& raw) {
  std::string v = trim(raw);
  I out{};
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size()) badValue(key, raw, "expected an integer");
  return out;
}

bool parseBool(const std::string& key, const std::string& raw) {
  std::string v = lower(trim(raw));
  if (v == "true") return true;
  if (v == "false") return false;
  badValue(key, raw, "expected true or false");
}

double parseDouble(const std::string& key, const std::string& raw) {
  std::string v = trim(raw);
  try {
    size_t n = 0;
    double d = std::stod(v, &n);
    if (n != v.size()) badValue(key, raw, "expected a number");
    return d;
  } catch (const std::logic_error&) {
    badValue(key, raw, "expected a number");
  }
}

// Splits "100 ms" into (100, "ms").
std::pair<int64_t, std::string> numberAndUnit(const std::string& key, const std::string& raw, const char* what) {
  std::string v = trim(raw);
  size_t i = 0;
  if (i < v.size() && (v[i] == '-' || v[i] == '+')) ++i;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  std::string num = v.substr(0, i);
  std::string unit = lower(trim(v.substr(i)));
  if (num.empty() || num == "-" || num == "+") badValue(key, raw, fmt::format("expected a {}", what));
  return {parseInteger<int64_t>(key, num), unit};
}

void validate(const ConfigOptionSpec& spec, const std::string& value) {
  switch (spec.type) {
    case ConfigType::kInt:
    case ConfigType::kLong: {
      const int64_t v = spec.type == ConfigType::kInt ? parseInteger<int32_t>(spec.key, value)
                                                      : parseInteger<int64_t>(spec.key, value);
      if (spec.min_value && v < *spec.min_value)
        badValue(spec.key, value, fmt::format("must be at least {}", *spec.min_value));
      break;
    }
    case ConfigType::kBool: parseBool(spec.key, value); break;
    case ConfigType::kDouble: parseDouble(spec.key, value); break;
    case ConfigType::kDuration: parseDurationMs(spec.key, value); break;
    case ConfigType::kMemorySize: parseMemorySize(spec.key, value); break;
    case ConfigType::kString: break;
    case ConfigType::kEnum: {
      std::string v = lower(trim(value));
      for (const auto& e : spec.enum_values)
        if (lower(e) == v) return;
      std::string allowed;
      for (const auto& e : spec.enum_values) allowed += (allowed.empty() ? "" : ", ") + e;
      badValue(spec.key, value, fmt::format("expected one of {}", allowed));
    }
  }
}

void flattenYaml(const YAML::Node& node, const std::string& prefix, std::vector<std::pair<std::string, YAML::Node>>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      std::string k = kv.first.as<std::string>();
      std::string full = prefix.empty() ? k : prefix + "." + k;
      if (kv.second.IsMap() && !findConfigOption(full)) {
        flattenYaml(kv.second, full, out);
      } else {
        out.emplace_back(full, kv.second);
      }
    }
  }
}

}  // namespace

const ConfigOptionSpec& registerConfigOption(ConfigOptionSpec spec) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.specs.find(spec.key);
  if (it != r.specs.end()) return *it->second;
  std::string key = spec.key;
  auto& slot = r.specs[key];
  slot = std::make_unique<ConfigOptionSpec>(std::move(spec));
  return *slot;
}

const ConfigOptionSpec* findConfigOption(const std::string& key) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.specs.find(key);
  return it == r.specs.end() ? nullptr : it->second.get();
}

std::vector<std::string> registeredConfigKeys() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> keys;
  for (const auto& kv : r.specs) keys.push_back(kv.first);
  return keys;
}

std::string closestConfigKey(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(3, key.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = editDistance(lower(key), lower(c));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

int64_t parseDurationMs(const std::string& key, const std::string& value) {
  auto [n, unit] = numberAndUnit(key, value, "duration such as '100 ms' or '1 s'");
  if (unit.empty() || unit == "ms" || unit == "milli" || unit == "millis" || unit == "millisecond" || unit == "milliseconds") return n;
  if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds") return n * 1000;
  if (unit == "min" || unit == "m" || unit == "minute" || unit == "minutes") return n * 60'000;
  if (unit == "h" || unit == "hour" || unit == "hours") return n * 3'600'000;
  if (unit == "d" || unit == "day" || unit == "days") return n * 86'400'000;
  badValue(key, value, fmt::format("unknown time unit '{}'", unit));
}

int64_t parseMemorySize(const std::string& key, const std::string& value) {
  auto [n, unit] = numberAndUnit(key, value, "memory size such as '32kb' or '64 mb'");
  // Flink's MemorySize units (powers of 1024).
  int shift = -1;
  if (unit.empty() || unit == "b" || unit == "bytes") shift = 0;
  if (unit == "k" || unit == "kb" || unit == "kibibytes") shift = 10;
  if (unit == "m" || unit == "mb" || unit == "mebibytes") shift = 20;
  if (unit == "g" || unit == "gb" || unit == "gibibytes") shift = 30;
  if (unit == "t" || unit == "tb" || unit == "tebibytes") shift = 40;
  if (shift < 0) {
    badValue(key, value,
             fmt::format("unknown memory unit '{}' (use b, k/kb, m/mb, g/gb or t/tb, or bytes, kibibytes, "
                         "mebibytes, gibibytes, tebibytes)",
                         unit));
  }
  if (n < 0) badValue(key, value, "a memory size cannot be negative");
  if (n > (std::numeric_limits<int64_t>::max() >> shift)) {
    badValue(key, value, "the memory size does not fit in 64 bits of bytes");
  }
  return n << shift;
}

namespace {

/// Flink option families Sluice does not implement yet, with what is missing. Keys under them are real
/// Flink keys a script may set, so the error says "not supported yet" rather than "unknown".
const char* unsupportedFlinkFeature(const std::string& key) {
  static const std::pair<const char*, const char*> kFamilies[] = {
      {"execution.checkpointing.", "checkpointing"},
      {"state.backend", "state backends other than the heap"},
      {"state.checkpoint", "checkpointing"},
      {"state.savepoints.", "savepoints"},
      {"restart-strategy", "restart strategies (a failed job is not restarted)"},
      {"table.exec.mini-batch.", "mini-batch aggregation"},
      {"table.exec.state.ttl", "state TTL"},
  };
  for (const auto& [prefix, feature] : kFamilies) {
    if (key.rfind(prefix, 0) == 0) return feature;
  }
  return nullptr;
}

}  // namespace

void Configuration::set(const std::string& key, const std::string& value) {
  const ConfigOptionSpec* spec = findConfigOption(key);
  if (spec == nullptr) {
    if (const char* feature = unsupportedFlinkFeature(key)) {
      throw ConfigError(fmt::format("Configuration key '{}' is a Flink option that Sluice does not support yet: {} "
                                    "is not implemented.",
                                    key, feature));
    }
    std::string close = closestConfigKey(key, registeredConfigKeys());
    throw ConfigError(close.empty() ? fmt::format("Unknown configuration key '{}'.", key)
                                    : fmt::format("Unknown configuration key '{}'. Did you mean '{}'?", key, close));
  }
  validate(*spec, value);
  values_[key] = trim(value);
}

void Configuration::setFromKeyValue(const std::string& key_value) {
  size_t eq = key_value.find('=');
  if (eq == std::string::npos)
    throw ConfigError(fmt::format("Expected key=value for a configuration option, got '{}'", key_value));
  set(trim(key_value.substr(0, eq)), key_value.substr(eq + 1));
}

void Configuration::loadYaml(const std::string& path, bool optional) {
  std::ifstream in(path);
  if (!in) {
    if (optional) return;
    throw ConfigError(fmt::format("Cannot read configuration file '{}'", path));
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}:{}:{}: malformed YAML: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (root.IsNull()) return;
  if (!root.IsMap()) throw ConfigError(fmt::format("{}: expected a map of configuration keys", path));
  std::vector<std::pair<std::string, YAML::Node>> entries;
  flattenYaml(root, "", entries);
  for (const auto& [key, node] : entries) {
    if (!node.IsScalar())
      throw ConfigError(fmt::format("{}:{}: configuration key '{}' needs a scalar value", path, node.Mark().line + 1, key));
    try {
      set(key, node.as<std::string>());
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}:{}: {}", path, node.Mark().line + 1, e.what()));
    }
  }
}

std::string Configuration::getString(const std::string& key) const {
  auto it = values_.find(key);
  if (it != values_.end()) return it->second;
  const ConfigOptionSpec* spec = findConfigOption(key);
  SLUICE_CHECK(spec != nullptr, "unregistered key {}", key);
  return spec->default_value;
}

int32_t Configuration::get(const ConfigOption<int32_t>& o) const { return parseInteger<int32_t>(o.key(), getString(o.key())); }
int64_t Configuration::get(const ConfigOption<int64_t>& o) const {
  const std::string v = getString(o.key());
  switch (o.spec().type) {
    case ConfigType::kDuration: return parseDurationMs(o.key(), v);
    case ConfigType::kMemorySize: return parseMemorySize(o.key(), v);
    default: return parseInteger<int64_t>(o.key(), v);
  }
}
bool Configuration::get(const ConfigOption<bool>& o) const { return parseBool(o.key(), getString(o.key())); }
double Configuration::get(const ConfigOption<double>& o) const { return parseDouble(o.key(), getString(o.key())); }
std::string Configuration::get(const ConfigOption<std::string>& o) const {
  std::string v = getString(o.key());
  if (o.spec().type == ConfigType::kEnum) {
    for (const auto& e : o.spec().enum_values)
      if (lower(e) == lower(v)) return e;
  }
  return v;
}

namespace options {
const ConfigOption<int32_t> kParallelismDefault("parallelism.default", ConfigType::kInt, "1",
                                                "Default parallelism of operators.", 1);
const ConfigOption<int32_t> kMaxParallelism("pipeline.max-parallelism", ConfigType::kInt, "-1",
                                            "Maximum parallelism (number of key groups); -1 derives it.");
const ConfigOption<std::string> kPipelineName("pipeline.name", ConfigType::kString, "",
                                              "Name of the job; defaults to the script name.");
const ConfigOption<bool> kOperatorChaining("pipeline.operator-chaining.enabled", ConfigType::kBool, "true",
                                           "Chain operators into one task where possible.");
const ConfigOption<bool> kChainOperatorsWithDifferentMaxParallelism(
    "pipeline.operator-chaining.chain-operators-with-different-max-parallelism", ConfigType::kBool, "true",
    "Chain operators whose maximum parallelism differs (false: equal max parallelism is a chaining condition).");
const ConfigOption<int64_t> kSlotRequestTimeout("slot.request.timeout", ConfigType::kDuration, "5 min",
                                                "How long a task waits for free slots before the job fails.");
const ConfigOption<std::string> kRuntimeMode("execution.runtime-mode", ConfigType::kEnum, "STREAMING",
                                             "STREAMING, BATCH or AUTOMATIC.", {"STREAMING", "BATCH", "AUTOMATIC"});
const ConfigOption<std::string> kLocalTimeZone("table.local-time-zone", ConfigType::kString, "default",
                                               "Session time zone for TIMESTAMP_LTZ conversions.");
const ConfigOption<int32_t> kNumberOfTaskSlots("taskmanager.numberOfTaskSlots", ConfigType::kInt, "1",
                                               "Slots per TaskManager.", 1);
const ConfigOption<int32_t> kNumberOfTaskManagers("local.number-taskmanager", ConfigType::kInt, "1",
                                                  "TaskManagers of the embedded MiniCluster.", 1);
const ConfigOption<int64_t> kBufferTimeout("execution.buffer-timeout", ConfigType::kDuration, "100 ms",
                                           "Max time before a partially filled output batch is flushed.");
const ConfigOption<int64_t> kIdleTimeout("table.exec.source.idle-timeout", ConfigType::kDuration, "0 ms",
                                         "Mark a source idle after this long without data (0 = never).");
const ConfigOption<int32_t> kBatchSize("sluice.batch.size", ConfigType::kInt, "1024",
                                       "Rows per columnar RowBatch cut by sources.", 1);
const ConfigOption<std::string> kTmpDirs(
    "io.tmp.dirs", ConfigType::kString, "",
    "Directories for temporary files such as the spill files of blocking (BATCH) results, separated by ',' "
    "(Flink's CoreOptions.TMP_DIRS); empty: the system temp directory.");
const ConfigOption<int64_t> kMemorySegmentSize(
    "taskmanager.memory.segment-size", ConfigType::kMemorySize, "32 kb",
    "Size of the network memory segments; the largest network buffer (Flink's TaskManagerOptions.MEMORY_SEGMENT_SIZE).");
const ConfigOption<int64_t> kMinSegmentSize(
    "taskmanager.memory.min-segment-size", ConfigType::kMemorySize, "256 b",
    "Smallest buffer size buffer debloating may choose (Flink's TaskManagerOptions.MIN_MEMORY_SEGMENT_SIZE).");
const ConfigOption<int64_t> kStartingSegmentSize(
    "taskmanager.memory.starting-segment-size", ConfigType::kMemorySize, "1 kb",
    "Buffer size buffer debloating starts from (Flink's TaskManagerOptions.STARTING_MEMORY_SEGMENT_SIZE, FLINK-36556).");
const ConfigOption<int64_t> kNetworkMemoryMin("taskmanager.memory.network.min", ConfigType::kMemorySize, "64 mb",
                                              "Lower bound of a TaskManager's network memory.");
const ConfigOption<int64_t> kNetworkMemoryMax("taskmanager.memory.network.max", ConfigType::kMemorySize, "1 gb",
                                              "Upper bound of a TaskManager's network memory.");
const ConfigOption<double> kNetworkMemoryFraction("taskmanager.memory.network.fraction", ConfigType::kDouble, "0.1",
                                                  "Fraction of the TaskManager's memory used for network buffers.");
const ConfigOption<int32_t> kNetworkBuffersPerChannel(
    "taskmanager.network.memory.buffers-per-channel", ConfigType::kInt, "2",
    "Exclusive buffers per input channel (the channel's initial credit).");
const ConfigOption<int32_t> kNetworkFloatingBuffersPerGate(
    "taskmanager.network.memory.floating-buffers-per-gate", ConfigType::kInt, "8",
    "Floating buffers per input gate, granted to channels by their announced backlog.");
const ConfigOption<int32_t> kNetworkMaxBuffersPerChannel(
    "taskmanager.network.memory.max-buffers-per-channel", ConfigType::kInt, "10",
    "Most buffers one subpartition may hold, so data skew cannot take a whole partition's pool.");
const ConfigOption<bool> kBufferDebloatEnabled("taskmanager.network.memory.buffer-debloat.enabled", ConfigType::kBool,
                                               "false", "Size network buffers from the measured throughput (FLIP-183).");
const ConfigOption<int64_t> kBufferDebloatTarget(
    "taskmanager.network.memory.buffer-debloat.target", ConfigType::kDuration, "1 s",
    "Time the buffered in-flight data of a gate should take to consume.");
const ConfigOption<int64_t> kBufferDebloatPeriod("taskmanager.network.memory.buffer-debloat.period",
                                                 ConfigType::kDuration, "200 ms",
                                                 "Interval between buffer size recalculations.");
const ConfigOption<int32_t> kBufferDebloatSamples("taskmanager.network.memory.buffer-debloat.samples",
                                                  ConfigType::kInt, "20",
                                                  "Samples of the buffer size moving average.");
const ConfigOption<int32_t> kBufferDebloatThresholdPercentages(
    "taskmanager.network.memory.buffer-debloat.threshold-percentages", ConfigType::kInt, "25",
    "Smallest change of the buffer size, in percent of the last announced size, that is announced.");
const ConfigOption<int32_t> kBufferDebloatStablePeriods(
    "sluice.network.buffer-debloat.stable-periods", ConfigType::kInt, "10",
    "Debloat periods whose mean smoothed buffer size decides announcements (keeps the size stable under "
    "steady load, FLINK-24230); 0 uses Flink's exact rule.");
}  // namespace options

}  // namespace sluice

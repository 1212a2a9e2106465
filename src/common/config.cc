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
  std::map<std::string, const ConfigOptionSpec*> deprecated;  // deprecated key -> the option's spec
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

// Optimal string alignment distance: Levenshtein plus a swap of two neighbours as one edit (the
// commonest typo: "defualt").
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
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

// `key` is the key as the user wrote it (the option's key or one of its deprecated keys).
void validate(const ConfigOptionSpec& spec, const std::string& key, const std::string& value) {
  switch (spec.type) {
    case ConfigType::kInt:
    case ConfigType::kLong: {
      const int64_t v =
          spec.type == ConfigType::kInt ? parseInteger<int32_t>(key, value) : parseInteger<int64_t>(key, value);
      if (spec.min_value && v < *spec.min_value)
        badValue(key, value, fmt::format("must be at least {}", *spec.min_value));
      break;
    }
    case ConfigType::kBool: parseBool(key, value); break;
    case ConfigType::kDouble: parseDouble(key, value); break;
    case ConfigType::kDuration: {
      const int64_t ms = parseDurationMs(key, value);
      if (spec.min_value && ms < *spec.min_value)
        badValue(key, value, fmt::format("must be at least {} ms", *spec.min_value));
      break;
    }
    case ConfigType::kMemorySize: {
      const int64_t bytes = parseMemorySize(key, value);
      if (spec.min_value && bytes < *spec.min_value)
        badValue(key, value, fmt::format("must be at least {} bytes", *spec.min_value));
      break;
    }
    case ConfigType::kString: break;
    case ConfigType::kEnum: {
      std::string v = lower(trim(value));
      for (const auto& e : spec.enum_values)
        if (lower(e) == v) return;
      std::string allowed;
      for (const auto& e : spec.enum_values) allowed += (allowed.empty() ? "" : ", ") + e;
      badValue(key, value, fmt::format("expected one of {}", allowed));
    }
  }
}

void flattenYaml(const YAML::Node& node, const std::string& prefix, std::vector<std::pair<std::string, YAML::Node>>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      std::string k = kv.first.as<std::string>();
      std::string full = prefix.empty() ? k : prefix + "." + k;
      // Every option is a scalar, so a map is always a level of the key ("restart-strategy: {type: ...}"
      // even though "restart-strategy" is a deprecated key).
      if (kv.second.IsMap()) {
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
  SLUICE_CHECK(r.deprecated.count(spec.key) == 0, "option key {} is already a deprecated key", spec.key);
  for (const auto& old : spec.deprecated_keys) {
    SLUICE_CHECK(r.specs.count(old) == 0 && r.deprecated.count(old) == 0, "deprecated key {} of {} is taken", old,
                 spec.key);
  }
  std::string key = spec.key;
  auto& slot = r.specs[key];
  slot = std::make_unique<ConfigOptionSpec>(std::move(spec));
  for (const auto& old : slot->deprecated_keys) r.deprecated[old] = slot.get();
  return *slot;
}

const ConfigOptionSpec* findConfigOption(const std::string& key) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.specs.find(key);
  if (it != r.specs.end()) return it->second.get();
  auto old = r.deprecated.find(key);
  return old == r.deprecated.end() ? nullptr : old->second;
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

void throwBadConfigValue(const std::string& key, const std::string& value, const std::string& why) {
  badValue(key, value, why);
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

/// Flink keys and key families Sluice does not implement yet, with what is missing. They are real Flink
/// keys a script may set, so the error says "not supported yet" rather than "unknown". Only keys that are
/// not registered get here, so a typo in a supported family still gets "Did you mean".
const char* unsupportedFlinkFeature(const std::string& key) {
  static const std::pair<const char*, const char*> kFamilies[] = {
      {"execution.checkpointing.storage", "choosing the checkpoint storage"},
      {"state.checkpoint-storage", "choosing the checkpoint storage"},
      {"execution.checkpointing.data-inline-threshold", "inlining small state into checkpoint metadata"},
      {"state.storage.fs.memory-threshold", "inlining small state into checkpoint metadata"},
      {"execution.checkpointing.unaligned.interruptible-timers.", "interruptible timers"},
      {"execution.checkpointing.file-merging.", "checkpoint file merging (FLIP-306)"},
      {"state.backend.rocksdb.", "tuning the RocksDB state backend"},
      {"state.backend.changelog.", "the changelog state backend"},
      {"execution.state-recovery.from-local", "local recovery"},
      {"execution.state-recovery.without-channel-state.", "recovery without channel state"},
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
  validate(*spec, key, value);
  if (spec->check) spec->check(key, trim(value));
  values_[spec->key] = trim(value);
}

void Configuration::reset(const std::string& key) {
  const ConfigOptionSpec* spec = findConfigOption(key);
  if (spec == nullptr) throw ConfigError(fmt::format("Unknown configuration key '{}'.", key));
  values_.erase(spec->key);
}

bool Configuration::contains(const std::string& key) const {
  const ConfigOptionSpec* spec = findConfigOption(key);
  return values_.count(spec != nullptr ? spec->key : key) > 0;
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
  const ConfigOptionSpec* spec = findConfigOption(key);
  SLUICE_CHECK(spec != nullptr, "unregistered key {}", key);
  auto it = values_.find(spec->key);
  if (it != values_.end()) return it->second;
  return spec->default_value;
}

namespace {
bool unsetWithoutDefault(const std::map<std::string, std::string>& values, const ConfigOptionSpec& spec) {
  return spec.default_value.empty() && values.count(spec.key) == 0;
}
}  // namespace

int32_t Configuration::get(const ConfigOption<int32_t>& o) const { return parseInteger<int32_t>(o.key(), getString(o.key())); }
int64_t Configuration::get(const ConfigOption<int64_t>& o) const {
  SLUICE_CHECK(!unsetWithoutDefault(values_, o.spec()), "option {} has no default; read it with getOptional", o.key());
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
std::optional<int64_t> Configuration::getOptional(const ConfigOption<int64_t>& o) const {
  if (unsetWithoutDefault(values_, o.spec())) return std::nullopt;
  return get(o);
}
std::optional<std::string> Configuration::getOptional(const ConfigOption<std::string>& o) const {
  if (unsetWithoutDefault(values_, o.spec())) return std::nullopt;
  return get(o);
}

namespace options {
const ConfigOption<int32_t> kParallelismDefault("parallelism.default", ConfigType::kInt, "1",
                                                "Default parallelism of operators.", 1);
const ConfigOption<int32_t> kMaxParallelism("pipeline.max-parallelism", ConfigType::kInt, "-1",
                                            "Maximum parallelism (number of key groups); -1 derives it.");
const ConfigOption<std::string> kPipelineName("pipeline.name", ConfigType::kString, "",
                                              "Name of the job; defaults to the script name.");
// Not read anywhere, so not declared in config.h: registering it makes the key known.
const ConfigOption<int64_t> kAutoWatermarkInterval(
    "pipeline.auto-watermark-interval", ConfigType::kDuration, "200 ms",
    "Flink's period of watermark generation; accepted for compatibility: watermarks are generated after every "
    "batch, which is never later than this period.");
const ConfigOption<int64_t> kBacklogWatermarkLagThreshold(ConfigOptionSpec{
    .key = "pipeline.backlog.watermark-lag-threshold",
    .type = ConfigType::kDuration,
    .default_value = "",
    .description = "A source reports backlog while its watermark lags the wall clock by more than this (FLIP-328); "
                   "unset: the watermark lag decides nothing.",
    .min_value = 1});
const ConfigOption<bool> kOperatorChaining("pipeline.operator-chaining.enabled", ConfigType::kBool, "true",
                                           "Chain operators into one task where possible.");
const ConfigOption<bool> kChainOperatorsWithDifferentMaxParallelism(
    "pipeline.operator-chaining.chain-operators-with-different-max-parallelism", ConfigType::kBool, "true",
    "Chain operators whose maximum parallelism differs (false: equal max parallelism is a chaining condition).");
const ConfigOption<int64_t> kSlotRequestTimeout("slot.request.timeout", ConfigType::kDuration, "5 min",
                                                "How long a task waits for free slots before the job fails.");
const ConfigOption<std::string> kRuntimeMode("execution.runtime-mode", ConfigType::kEnum, "STREAMING",
                                             "STREAMING, BATCH or AUTOMATIC.", {"STREAMING", "BATCH", "AUTOMATIC"});
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
std::vector<std::string> tmpDirectories(const Configuration& config) {
  std::vector<std::string> dirs;
  const std::string configured = config.get(kTmpDirs);
  for (size_t start = 0; start <= configured.size();) {
    const size_t end = std::min(configured.find(',', start), configured.size());
    std::string dir = trim(configured.substr(start, end - start));
    if (!dir.empty()) dirs.push_back(std::move(dir));
    start = end + 1;
  }
  return dirs;
}
const ConfigOption<int64_t> kSortedInputsMemory(
    "execution.sorted-inputs.memory", ConfigType::kMemorySize, "128 mb",
    "Memory of the external sorter of one keyed input (BATCH sorted inputs, sorting during backlog) before it "
    "spills a sorted run to io.tmp.dirs (Flink's ExecutionOptions.SORTED_INPUTS_MEMORY).", 1024);
const ConfigOption<bool> kSortedInputsEnabled(
    "execution.sorted-inputs.enabled", ConfigType::kBool, "true",
    "Sort the inputs of keyed one-input operators in BATCH runtime mode (Flink's ExecutionOptions.SORT_INPUTS).");
const ConfigOption<int32_t> kSortMaxFan("taskmanager.runtime.max-fan", ConfigType::kInt, "128",
                                        "The most sorted runs an external sorter merges at once.", 2);
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

// Checkpointing: Flink's CheckpointingOptions (2.x keys; the 1.x names are deprecated keys).
const ConfigOption<int64_t> kCheckpointingInterval(ConfigOptionSpec{
    .key = "execution.checkpointing.interval",
    .type = ConfigType::kDuration,
    .default_value = "",
    .description = "Base period of periodic checkpoints; unset: checkpointing is off.",
    .min_value = 10});
const ConfigOption<int64_t> kCheckpointingIntervalDuringBacklog(ConfigOptionSpec{
    .key = "execution.checkpointing.interval-during-backlog",
    .type = ConfigType::kDuration,
    .default_value = "",
    .description = "Checkpoint period while a source reports backlog (FLIP-309); unset: the interval; 0: no "
                   "checkpoints during backlog.",
    .min_value = 0});
const ConfigOption<std::string> kCheckpointingConsistencyMode(ConfigOptionSpec{
    .key = "execution.checkpointing.mode",
    .type = ConfigType::kEnum,
    .default_value = "EXACTLY_ONCE",
    .description = "Checkpointing guarantee: EXACTLY_ONCE (aligned barriers) or AT_LEAST_ONCE.",
    .enum_values = {"EXACTLY_ONCE", "AT_LEAST_ONCE"}});
const ConfigOption<int64_t> kCheckpointingTimeout(ConfigOptionSpec{
    .key = "execution.checkpointing.timeout",
    .type = ConfigType::kDuration,
    .default_value = "10 min",
    .description = "A pending checkpoint that has not completed after this long expires.",
    .min_value = 10});
const ConfigOption<int64_t> kMinPauseBetweenCheckpoints(ConfigOptionSpec{
    .key = "execution.checkpointing.min-pause",
    .type = ConfigType::kDuration,
    .default_value = "0 ms",
    .description = "Least time from the completion of one checkpoint to the trigger of the next.",
    .min_value = 0});
const ConfigOption<int32_t> kMaxConcurrentCheckpoints(ConfigOptionSpec{
    .key = "execution.checkpointing.max-concurrent-checkpoints",
    .type = ConfigType::kInt,
    .default_value = "1",
    .description = "Most checkpoints in flight at once.",
    .min_value = 1});
const ConfigOption<int32_t> kTolerableFailureNumber(ConfigOptionSpec{
    .key = "execution.checkpointing.tolerable-failed-checkpoints",
    .type = ConfigType::kInt,
    .default_value = "0",
    .description = "Checkpoint failures in a row tolerated before the job fails.",
    .min_value = 0});
const ConfigOption<bool> kEnableUnaligned(ConfigOptionSpec{
    .key = "execution.checkpointing.unaligned.enabled",
    .type = ConfigType::kBool,
    .default_value = "false",
    .description = "Unaligned checkpoints (FLIP-76): barriers overtake in-flight data, which is stored with the "
                   "checkpoint; needs EXACTLY_ONCE and one concurrent checkpoint.",
    .deprecated_keys = {"execution.checkpointing.unaligned"}});
// Read by nothing: declared so that scripts setting Flink's key run (no declaration in config.h).
const ConfigOption<bool> kForceUnalignedCheckpoints(ConfigOptionSpec{
    .key = "execution.checkpointing.unaligned.forced",
    .type = ConfigType::kBool,
    .default_value = "false",
    .description = "Flink: unaligned checkpoints even for iterative jobs. Sluice has no iterations: no effect. "
                   "FORWARD, RESCALE and BROADCAST edges stay aligned either way, as in Flink."});
const ConfigOption<int64_t> kAlignedCheckpointTimeout(ConfigOptionSpec{
    .key = "execution.checkpointing.aligned-checkpoint-timeout",
    .type = ConfigType::kDuration,
    .default_value = "0 ms",
    .description = "With unaligned checkpoints: align first and switch to unaligned after this long; 0 starts "
                   "unaligned at once.",
    .min_value = 0,
    .deprecated_keys = {"execution.checkpointing.alignment-timeout"}});
const ConfigOption<std::string> kCheckpointsDirectory(ConfigOptionSpec{
    .key = "execution.checkpointing.dir",
    .type = ConfigType::kString,
    .default_value = "",
    .description = "Root directory of checkpoint data and metadata; unset: none.",
    .deprecated_keys = {"state.checkpoints.dir"}});
const ConfigOption<std::string> kSavepointDirectory(ConfigOptionSpec{
    .key = "execution.checkpointing.savepoint-dir",
    .type = ConfigType::kString,
    .default_value = "",
    .description = "Default directory of savepoints; unset: none.",
    .deprecated_keys = {"state.savepoints.dir"}});
const ConfigOption<int32_t> kMaxRetainedCheckpoints(ConfigOptionSpec{
    .key = "execution.checkpointing.num-retained",
    .type = ConfigType::kInt,
    .default_value = "1",
    .description = "Completed checkpoints kept; older ones are subsumed and deleted.",
    .min_value = 1,
    .deprecated_keys = {"state.checkpoints.num-retained"}});
const ConfigOption<std::string> kExternalizedCheckpointRetention(ConfigOptionSpec{
    .key = "execution.checkpointing.externalized-checkpoint-retention",
    .type = ConfigType::kEnum,
    .default_value = "NO_EXTERNALIZED_CHECKPOINTS",
    .description = "What happens to the retained checkpoints when the job is cancelled.",
    .enum_values = {"NO_EXTERNALIZED_CHECKPOINTS", "DELETE_ON_CANCELLATION", "RETAIN_ON_CANCELLATION"}});
const ConfigOption<bool> kIncrementalCheckpoints(ConfigOptionSpec{
    .key = "execution.checkpointing.incremental",
    .type = ConfigType::kBool,
    .default_value = "false",
    .description = "Checkpoints upload only what changed since the last one (RocksDB backend).",
    .deprecated_keys = {"state.backend.incremental"}});
const ConfigOption<bool> kEnableCheckpointsAfterTasksFinish(ConfigOptionSpec{
    .key = "execution.checkpointing.checkpoints-after-tasks-finish",
    .type = ConfigType::kBool,
    .default_value = "true",
    .description = "Keep checkpointing after some tasks have finished (FLIP-147).",
    .deprecated_keys = {"execution.checkpointing.checkpoints-after-tasks-finish.enabled"}});

// State backend: Flink's StateBackendOptions.
const ConfigOption<std::string> kStateBackend(ConfigOptionSpec{
    .key = "state.backend.type",
    .type = ConfigType::kEnum,
    .default_value = "hashmap",
    .description = "Keyed state backend: hashmap (objects on the heap) or rocksdb.",
    .enum_values = {"hashmap", "rocksdb"},
    .deprecated_keys = {"state.backend"}});

// RocksDB memory: Flink's RocksDBOptions, RocksDBConfigurableOptions and TaskManagerOptions.
const ConfigOption<int64_t> kManagedMemorySize(ConfigOptionSpec{
    .key = "taskmanager.memory.managed.size",
    .type = ConfigType::kMemorySize,
    .default_value = "",
    .description = "Managed memory of a TaskManager (RocksDB block cache and write buffers), shared by its slots; "
                   "unset: taskmanager.memory.managed.fraction of taskmanager.memory.flink.size, or 128 mb "
                   "(Flink's default for local execution)."});
const ConfigOption<double> kManagedMemoryFraction("taskmanager.memory.managed.fraction", ConfigType::kDouble, "0.4",
                                                  "Fraction of taskmanager.memory.flink.size that is managed memory.");
const ConfigOption<int64_t> kTotalFlinkMemory("taskmanager.memory.flink.size", ConfigType::kMemorySize, "",
                                              "Total Flink memory of a TaskManager; unset: not configured.");
const ConfigOption<bool> kRocksDBMemoryManaged(
    "state.backend.rocksdb.memory.managed", ConfigType::kBool, "true",
    "RocksDB instances of a slot share one block cache and write buffer manager sized by the slot's managed memory.");
const ConfigOption<int64_t> kRocksDBFixedMemoryPerSlot(
    "state.backend.rocksdb.memory.fixed-per-slot", ConfigType::kMemorySize, "",
    "Fixed memory of the RocksDB instances of one slot; overrides the managed memory when set.");
const ConfigOption<double> kRocksDBWriteBufferRatio("state.backend.rocksdb.memory.write-buffer-ratio",
                                                    ConfigType::kDouble, "0.5",
                                                    "Share of the RocksDB memory for write buffers (memtables).");
const ConfigOption<double> kRocksDBHighPriorityPoolRatio(
    "state.backend.rocksdb.memory.high-prio-pool-ratio", ConfigType::kDouble, "0.1",
    "Share of the block cache reserved for index and filter blocks.");
const ConfigOption<int64_t> kRocksDBWriteBufferSize("state.backend.rocksdb.writebuffer.size", ConfigType::kMemorySize,
                                                    "64 mb", "Size of one memtable of a column family.");
const ConfigOption<int32_t> kRocksDBMaxWriteBufferNumber("state.backend.rocksdb.writebuffer.count", ConfigType::kInt,
                                                         "2", "Memtables of a column family before writes stall.", 1);
const ConfigOption<int64_t> kRocksDBBlockCacheSize(
    "state.backend.rocksdb.block.cache-size", ConfigType::kMemorySize, "8 mb",
    "Block cache of one RocksDB instance when its memory is neither managed nor fixed per slot.");
const ConfigOption<bool> kRocksDBUseBloomFilter("state.backend.rocksdb.use-bloom-filter", ConfigType::kBool, "false",
                                                "SST files carry a bloom filter per key for point lookups.");
const ConfigOption<double> kRocksDBBloomFilterBitsPerKey("state.backend.rocksdb.bloom-filter.bits-per-key",
                                                         ConfigType::kDouble, "10.0", "Bits per key of the bloom filter.");

// Restart strategies: Flink's RestartStrategyOptions; failover: JobManagerOptions.
const ConfigOption<std::string> kRestartStrategy(ConfigOptionSpec{
    .key = "restart-strategy.type",
    .type = ConfigType::kEnum,
    .default_value = "",
    .description = "How a failed job restarts: none (also off, disable), fixed-delay, failure-rate or "
                   "exponential-delay; unset: none without checkpointing, exponential-delay with it.",
    .enum_values = {"none", "off", "disable", "fixed-delay", "failure-rate", "exponential-delay", "fixeddelay",
                    "failurerate", "exponentialdelay"},
    .deprecated_keys = {"restart-strategy"}});
const ConfigOption<std::string> kFailoverStrategy(ConfigOptionSpec{
    .key = "jobmanager.execution.failover-strategy",
    .type = ConfigType::kEnum,
    .default_value = "region",
    .description = "What a task failure restarts: region (the failed task's pipelined region and the regions "
                   "consuming its results) or full (every task of the job).",
    .enum_values = {"region", "full"}});
const ConfigOption<int32_t> kRestartStrategyFixedDelayAttempts(ConfigOptionSpec{
    .key = "restart-strategy.fixed-delay.attempts",
    .type = ConfigType::kInt,
    .default_value = "1",
    .description = "fixed-delay: restarts before the job fails.",
    .min_value = 0});
const ConfigOption<int64_t> kRestartStrategyFixedDelayDelay(ConfigOptionSpec{
    .key = "restart-strategy.fixed-delay.delay",
    .type = ConfigType::kDuration,
    .default_value = "1 s",
    .description = "fixed-delay: wait between a failure and the restart.",
    .min_value = 0});
const ConfigOption<int32_t> kRestartStrategyFailureRateMaxFailuresPerInterval(ConfigOptionSpec{
    .key = "restart-strategy.failure-rate.max-failures-per-interval",
    .type = ConfigType::kInt,
    .default_value = "1",
    .description = "failure-rate: most failures within one interval that still restart.",
    .min_value = 1});
const ConfigOption<int64_t> kRestartStrategyFailureRateFailureRateInterval(ConfigOptionSpec{
    .key = "restart-strategy.failure-rate.failure-rate-interval",
    .type = ConfigType::kDuration,
    .default_value = "1 min",
    .description = "failure-rate: the interval over which failures are counted.",
    .min_value = 1});
const ConfigOption<int64_t> kRestartStrategyFailureRateDelay(ConfigOptionSpec{
    .key = "restart-strategy.failure-rate.delay",
    .type = ConfigType::kDuration,
    .default_value = "1 s",
    .description = "failure-rate: wait between a failure and the restart.",
    .min_value = 0});
const ConfigOption<int64_t> kRestartStrategyExponentialDelayInitialBackoff(ConfigOptionSpec{
    .key = "restart-strategy.exponential-delay.initial-backoff",
    .type = ConfigType::kDuration,
    .default_value = "1 s",
    .description = "exponential-delay: the first backoff.",
    .min_value = 1});
const ConfigOption<int64_t> kRestartStrategyExponentialDelayMaxBackoff(ConfigOptionSpec{
    .key = "restart-strategy.exponential-delay.max-backoff",
    .type = ConfigType::kDuration,
    .default_value = "1 min",
    .description = "exponential-delay: the largest backoff.",
    .min_value = 1});
const ConfigOption<double> kRestartStrategyExponentialDelayBackoffMultiplier(ConfigOptionSpec{
    .key = "restart-strategy.exponential-delay.backoff-multiplier",
    .type = ConfigType::kDouble,
    .default_value = "1.5",
    .description = "exponential-delay: factor applied to the backoff after each restart attempt (> 1)."});
const ConfigOption<int64_t> kRestartStrategyExponentialDelayResetBackoffThreshold(ConfigOptionSpec{
    .key = "restart-strategy.exponential-delay.reset-backoff-threshold",
    .type = ConfigType::kDuration,
    .default_value = "1 h",
    .description = "exponential-delay: a job that runs this long after a restart without failing starts over "
                   "at the initial backoff.",
    .min_value = 1});
const ConfigOption<double> kRestartStrategyExponentialDelayJitterFactor(ConfigOptionSpec{
    .key = "restart-strategy.exponential-delay.jitter-factor",
    .type = ConfigType::kDouble,
    .default_value = "0.1",
    .description = "exponential-delay: the backoff varies randomly by up to this fraction of itself (0 to 1)."});
const ConfigOption<int32_t> kRestartStrategyExponentialDelayAttempts(ConfigOptionSpec{
    .key = "restart-strategy.exponential-delay.attempts-before-reset-backoff",
    .type = ConfigType::kInt,
    .default_value = "2147483647",
    .description = "exponential-delay: restart attempts allowed before the backoff is reset; more fail the job.",
    .min_value = 1});
const ConfigOption<std::string> kExecutionFailoverStrategy(ConfigOptionSpec{
    .key = "jobmanager.execution.failover-strategy",
    .type = ConfigType::kEnum,
    .default_value = "region",
    .description = "What restarts after a task failure: region (the failed pipelined region and the regions "
                   "it affects) or full (the whole job).",
    .enum_values = {"region", "full"}});

// State recovery: Flink's StateRecoveryOptions.
const ConfigOption<std::string> kSavepointPath(ConfigOptionSpec{
    .key = "execution.state-recovery.path",
    .type = ConfigType::kString,
    .default_value = "",
    .description = "Savepoint or retained checkpoint the job starts from; unset: an empty start.",
    .deprecated_keys = {"execution.savepoint.path"}});
const ConfigOption<bool> kSavepointIgnoreUnclaimedState(ConfigOptionSpec{
    .key = "execution.state-recovery.ignore-unclaimed-state",
    .type = ConfigType::kBool,
    .default_value = "false",
    .description = "Start even when some state of the snapshot matches no operator of the job.",
    .deprecated_keys = {"execution.savepoint.ignore-unclaimed-state"}});
const ConfigOption<std::string> kRestoreMode(ConfigOptionSpec{
    .key = "execution.state-recovery.claim-mode",
    .type = ConfigType::kEnum,
    .default_value = "NO_CLAIM",
    .description = "Who owns the restored snapshot: NO_CLAIM (the user; the first checkpoint is full) or CLAIM "
                   "(the job may delete it once subsumed).",
    .enum_values = {"NO_CLAIM", "CLAIM"},
    .deprecated_keys = {"execution.savepoint-restore-mode"}});

// Failure injection for tests.
const ConfigOption<std::string> kTestFailOperator(ConfigOptionSpec{
    .key = "sluice.test.fail-operator",
    .type = ConfigType::kString,
    .default_value = "",
    .description = "Test only: the named operator's subtask (an operator name or a substring of it) throws after "
                   "it has received sluice.test.fail-after-records records, in each of the first "
                   "sluice.test.fail-attempts attempts; unset: no injected failure."});
const ConfigOption<int64_t> kTestFailAfterRecords(ConfigOptionSpec{
    .key = "sluice.test.fail-after-records",
    .type = ConfigType::kLong,
    .default_value = "-1",
    .description = "Test only: records the failing subtask receives (a source: emits) before it throws, once a "
                   "checkpoint of the attempt has completed when checkpointing is on; -1: off.",
    .min_value = -1});
const ConfigOption<int32_t> kTestFailSubtask(ConfigOptionSpec{
    .key = "sluice.test.fail-subtask",
    .type = ConfigType::kInt,
    .default_value = "0",
    .description = "Test only: index of the subtask of sluice.test.fail-operator that throws.",
    .min_value = 0});
const ConfigOption<int32_t> kTestFailAttempts(ConfigOptionSpec{
    .key = "sluice.test.fail-attempts",
    .type = ConfigType::kInt,
    .default_value = "1",
    .description = "Test only: how many attempts (the first run, then each restart) fail.",
    .min_value = 0});
}  // namespace options

}  // namespace sluice

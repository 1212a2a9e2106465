#pragma once
/// Configuration with typed options and Flink's keys.
///
/// Values come from, later wins: option defaults < conf/config.yaml < `-D key=value` < SQL `SET`.
/// Every key must be a registered `ConfigOption`; an unknown key or an ill-typed value throws
/// ConfigError naming the key (and the closest known key). Not thread-safe for writes; the
/// Configuration is built on the client thread and then shared read-only with tasks.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

/// The value type of an option; decides how a string value is parsed and validated.
enum class ConfigType { kInt, kLong, kBool, kDouble, kString, kDuration, kEnum, kMemorySize };

/// The untyped description of a registered option.
struct ConfigOptionSpec {
  std::string key;
  ConfigType type;
  std::string default_value;  ///< textual default, parsed like any user value
  std::string description;
  std::vector<std::string> enum_values;  ///< for kEnum: allowed values (case-insensitive)
  std::optional<int64_t> min_value;      ///< for kInt/kLong: smallest allowed value, checked when set
};

/// Registers a spec in the process-wide registry (idempotent by key) and returns the stored copy.
const ConfigOptionSpec& registerConfigOption(ConfigOptionSpec spec);
/// The registered spec for `key`, or nullptr.
const ConfigOptionSpec* findConfigOption(const std::string& key);
/// All registered keys, sorted.
std::vector<std::string> registeredConfigKeys();
/// The registered key with the smallest edit distance to `key` (empty if none is close).
std::string closestConfigKey(const std::string& key, const std::vector<std::string>& candidates);

/// Parses a Flink duration ("100 ms", "1s", "2 min", "1 h", a bare number = ms) into ms.
/// Throws ConfigError naming `key` on a bad value.
int64_t parseDurationMs(const std::string& key, const std::string& value);
/// Parses a Flink memory size ("32kb", "64 mb", "1tb", "1024" = bytes; units as Flink's MemorySize: b, k/kb,
/// m/mb, g/gb, t/tb and their long names, powers of 1024) into bytes. Throws ConfigError naming `key` on an
/// unknown unit, a negative size or one past 2^63 - 1 bytes.
int64_t parseMemorySize(const std::string& key, const std::string& value);

/// A typed option: key, default, description. T is int32_t, int64_t (also durations in ms and
/// memory sizes in bytes), bool, double or std::string (also enums).
template <typename T>
class ConfigOption {
 public:
  ConfigOption(std::string key, ConfigType type, std::string default_value, std::string description,
               std::vector<std::string> enum_values = {})
      : spec_(&registerConfigOption(ConfigOptionSpec{std::move(key), type, std::move(default_value),
                                                     std::move(description), std::move(enum_values), {}})) {}
  /// An integer option whose values below `min_value` are rejected when set (so `SET` and `-D` name the
  /// key at once instead of the job failing later).
  ConfigOption(std::string key, ConfigType type, std::string default_value, std::string description,
               int64_t min_value)
      : spec_(&registerConfigOption(ConfigOptionSpec{std::move(key), type, std::move(default_value),
                                                     std::move(description), {}, min_value})) {}
  const std::string& key() const { return spec_->key; }
  const ConfigOptionSpec& spec() const { return *spec_; }

 private:
  const ConfigOptionSpec* spec_;
};

/// A set of option values (strings, validated on set, parsed on get).
class Configuration {
 public:
  /// Sets `key` to `value` after checking that the key is registered and the value parses.
  /// Throws ConfigError "Unknown configuration key 'k'. Did you mean 'x'?" or
  /// "Invalid value 'v' for configuration key 'k': ...".
  void set(const std::string& key, const std::string& value);
  /// Parses "key=value" (as given to -D). Throws ConfigError when there is no '='.
  void setFromKeyValue(const std::string& key_value);
  /// Loads a YAML file: flat keys ("a.b: 1") or nested maps ("a: {b: 1}"). Missing file is fine
  /// when `optional`; a malformed file throws ConfigError naming the path and line.
  void loadYaml(const std::string& path, bool optional);

  bool contains(const std::string& key) const { return values_.count(key) > 0; }
  /// The textual value of `key` (set or default).
  std::string getString(const std::string& key) const;

  int32_t get(const ConfigOption<int32_t>& option) const;
  int64_t get(const ConfigOption<int64_t>& option) const;
  bool get(const ConfigOption<bool>& option) const;
  double get(const ConfigOption<double>& option) const;
  std::string get(const ConfigOption<std::string>& option) const;

  /// Values explicitly set, by key.
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

/// Options shared by the whole engine (Flink's keys and defaults).
namespace options {
extern const ConfigOption<int32_t> kParallelismDefault;     ///< parallelism.default = 1
extern const ConfigOption<int32_t> kMaxParallelism;         ///< pipeline.max-parallelism = -1 (derived)
extern const ConfigOption<std::string> kPipelineName;       ///< pipeline.name
extern const ConfigOption<bool> kOperatorChaining;          ///< pipeline.operator-chaining.enabled = true
/// pipeline.operator-chaining.chain-operators-with-different-max-parallelism = true
extern const ConfigOption<bool> kChainOperatorsWithDifferentMaxParallelism;
extern const ConfigOption<int64_t> kSlotRequestTimeout;     ///< slot.request.timeout = 5 min
extern const ConfigOption<std::string> kRuntimeMode;        ///< execution.runtime-mode = STREAMING
extern const ConfigOption<std::string> kLocalTimeZone;      ///< table.local-time-zone = default
extern const ConfigOption<int32_t> kNumberOfTaskSlots;      ///< taskmanager.numberOfTaskSlots = 1
extern const ConfigOption<int32_t> kNumberOfTaskManagers;   ///< local.number-taskmanager = 1
extern const ConfigOption<int64_t> kBufferTimeout;          ///< execution.buffer-timeout = 100 ms
extern const ConfigOption<int64_t> kIdleTimeout;            ///< table.exec.source.idle-timeout = 0 ms
extern const ConfigOption<int32_t> kBatchSize;              ///< sluice.batch.size = 1024 rows per RowBatch
extern const ConfigOption<std::string> kTmpDirs;            ///< io.tmp.dirs = "" (the system temp directory)
// Network stack (Flink's TaskManagerOptions / NettyShuffleEnvironmentOptions keys and defaults).
extern const ConfigOption<int64_t> kMemorySegmentSize;      ///< taskmanager.memory.segment-size = 32 kb (bytes)
extern const ConfigOption<int64_t> kMinSegmentSize;         ///< taskmanager.memory.min-segment-size = 256 b (bytes)
extern const ConfigOption<int64_t> kStartingSegmentSize;    ///< taskmanager.memory.starting-segment-size = 1 kb (bytes)
extern const ConfigOption<int64_t> kNetworkMemoryMin;       ///< taskmanager.memory.network.min = 64 mb (bytes)
extern const ConfigOption<int64_t> kNetworkMemoryMax;       ///< taskmanager.memory.network.max = 1 gb (bytes)
extern const ConfigOption<double> kNetworkMemoryFraction;   ///< taskmanager.memory.network.fraction = 0.1
extern const ConfigOption<int32_t> kNetworkBuffersPerChannel;      ///< taskmanager.network.memory.buffers-per-channel = 2
extern const ConfigOption<int32_t> kNetworkFloatingBuffersPerGate; ///< taskmanager.network.memory.floating-buffers-per-gate = 8
extern const ConfigOption<int32_t> kNetworkMaxBuffersPerChannel;   ///< taskmanager.network.memory.max-buffers-per-channel = 10
extern const ConfigOption<bool> kBufferDebloatEnabled;      ///< taskmanager.network.memory.buffer-debloat.enabled = false
extern const ConfigOption<int64_t> kBufferDebloatTarget;    ///< taskmanager.network.memory.buffer-debloat.target = 1 s (ms)
extern const ConfigOption<int64_t> kBufferDebloatPeriod;    ///< taskmanager.network.memory.buffer-debloat.period = 200 ms (ms)
extern const ConfigOption<int32_t> kBufferDebloatSamples;   ///< taskmanager.network.memory.buffer-debloat.samples = 20
/// taskmanager.network.memory.buffer-debloat.threshold-percentages = 25
extern const ConfigOption<int32_t> kBufferDebloatThresholdPercentages;
/// sluice.network.buffer-debloat.stable-periods = 10 (Sluice's anti-oscillation rule; 0 = Flink's exact rule)
extern const ConfigOption<int32_t> kBufferDebloatStablePeriods;
}  // namespace options

}  // namespace sluice

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
  ConfigType type = ConfigType::kString;
  std::string default_value = {};  ///< textual default, parsed like any user value
  std::string description = {};
  std::vector<std::string> enum_values = {};  ///< for kEnum: allowed values (case-insensitive)
  /// kInt/kLong: smallest allowed value; kDuration: smallest allowed duration in ms. Checked when set.
  std::optional<int64_t> min_value = {};
  /// Older Flink names of the same option (Flink's `withDeprecatedKeys`): setting one sets this option.
  std::vector<std::string> deprecated_keys = {};
  /// A further check of a value that parsed, run when the option is set; throws ConfigError naming `key`
  /// (the key as the user wrote it). For rules the option's own module knows (a time zone id).
  void (*check)(const std::string& key, const std::string& value) = nullptr;
};

/// Registers a spec in the process-wide registry (idempotent by key) and returns the stored copy. Its
/// deprecated keys are registered as aliases; an alias that is already a key or another option's alias is an
/// InternalError.
const ConfigOptionSpec& registerConfigOption(ConfigOptionSpec spec);
/// The registered spec for `key` (a key or a deprecated key of it), or nullptr.
const ConfigOptionSpec* findConfigOption(const std::string& key);
/// All registered keys (not their deprecated keys), sorted.
std::vector<std::string> registeredConfigKeys();
/// The registered key with the smallest edit distance to `key` (empty if none is close).
std::string closestConfigKey(const std::string& key, const std::vector<std::string>& candidates);

/// Throws ConfigError "Invalid value 'v' for configuration key 'k': why" (for a spec's `check`).
[[noreturn]] void throwBadConfigValue(const std::string& key, const std::string& value, const std::string& why);
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
  /// An integer, duration (ms) or memory-size (bytes) option whose values below `min_value` are rejected
  /// when set (so `SET` and `-D` name the key at once instead of the job failing later).
  ConfigOption(std::string key, ConfigType type, std::string default_value, std::string description,
               int64_t min_value)
      : spec_(&registerConfigOption(ConfigOptionSpec{std::move(key), type, std::move(default_value),
                                                     std::move(description), {}, min_value})) {}
  /// An option described in full (deprecated keys, a duration's minimum, no default: an empty
  /// `default_value` on a non-string option means "unset", read with Configuration::getOptional).
  explicit ConfigOption(ConfigOptionSpec spec) : spec_(&registerConfigOption(std::move(spec))) {}
  const std::string& key() const { return spec_->key; }
  const ConfigOptionSpec& spec() const { return *spec_; }

 private:
  const ConfigOptionSpec* spec_;
};

/// A set of option values (strings, validated on set, parsed on get). Values are stored under the
/// option's key: setting a deprecated key sets the option, and the later of the two settings wins
/// (Flink prefers the new key inside one source; here each source is a later `set`).
class Configuration {
 public:
  /// Sets `key` (a key or a deprecated key) to `value` after checking that the key is registered and
  /// the value parses. Throws ConfigError "Unknown configuration key 'k'. Did you mean 'x'?",
  /// "... is a Flink option that Sluice does not support yet: ..." or
  /// "Invalid value 'v' for configuration key 'k': ..." (naming `key` as given).
  void set(const std::string& key, const std::string& value);
  /// Parses "key=value" (as given to -D). Throws ConfigError when there is no '='.
  void setFromKeyValue(const std::string& key_value);
  /// Loads a YAML file: flat keys ("a.b: 1") or nested maps ("a: {b: 1}"). Missing file is fine
  /// when `optional`; a malformed file throws ConfigError naming the path and line.
  void loadYaml(const std::string& path, bool optional);

  /// Drops the explicit value of `key` (or of the option it is a deprecated key of), so the default applies
  /// again (SQL `RESET 'key'`). An unknown key is a ConfigError naming it.
  void reset(const std::string& key);
  /// Whether `key` (or the option it is a deprecated key of) was set explicitly.
  bool contains(const std::string& key) const;
  /// The textual value of `key` (set or default; "" for an unset option without default).
  std::string getString(const std::string& key) const;

  int32_t get(const ConfigOption<int32_t>& option) const;
  int64_t get(const ConfigOption<int64_t>& option) const;
  bool get(const ConfigOption<bool>& option) const;
  double get(const ConfigOption<double>& option) const;
  std::string get(const ConfigOption<std::string>& option) const;
  /// The value of an option that may be unset (e.g. execution.checkpointing.interval): nullopt when it was
  /// not set and has no default. `get` on such an option is an InternalError.
  std::optional<int64_t> getOptional(const ConfigOption<int64_t>& option) const;
  /// As above; for a string or enum option "unset" is an empty default with no value set.
  std::optional<std::string> getOptional(const ConfigOption<std::string>& option) const;

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
/// pipeline.backlog.watermark-lag-threshold (FLIP-328; ms, unset = off, else > 0): a source whose watermark
/// lags the wall clock by more than this reports backlog (runtime/operators/source_backlog_status.h).
extern const ConfigOption<int64_t> kBacklogWatermarkLagThreshold;
extern const ConfigOption<bool> kOperatorChaining;          ///< pipeline.operator-chaining.enabled = true
/// pipeline.operator-chaining.chain-operators-with-different-max-parallelism = true
extern const ConfigOption<bool> kChainOperatorsWithDifferentMaxParallelism;
extern const ConfigOption<int64_t> kSlotRequestTimeout;     ///< slot.request.timeout = 5 min
extern const ConfigOption<std::string> kRuntimeMode;        ///< execution.runtime-mode = STREAMING
extern const ConfigOption<int32_t> kNumberOfTaskSlots;      ///< taskmanager.numberOfTaskSlots = 1
extern const ConfigOption<int32_t> kNumberOfTaskManagers;   ///< local.number-taskmanager = 1
extern const ConfigOption<int64_t> kBufferTimeout;          ///< execution.buffer-timeout = 100 ms
extern const ConfigOption<int64_t> kIdleTimeout;            ///< table.exec.source.idle-timeout = 0 ms
extern const ConfigOption<int32_t> kBatchSize;              ///< sluice.batch.size = 1024 rows per RowBatch
extern const ConfigOption<std::string> kTmpDirs;            ///< io.tmp.dirs = "" (the system temp directory)
/// The directories of io.tmp.dirs, split at ',' and trimmed (empty: use the system temp directory).
std::vector<std::string> tmpDirectories(const Configuration& config);
/// execution.sorted-inputs.memory = 128 mb (bytes): the buffer of one keyed input's external sorter
/// (BATCH sorted inputs, FLIP-327 sorting during backlog) before it spills a sorted run.
extern const ConfigOption<int64_t> kSortedInputsMemory;
/// execution.sorted-inputs.enabled = true: BATCH mode sorts the inputs of keyed one-input operators.
extern const ConfigOption<bool> kSortedInputsEnabled;
/// taskmanager.runtime.max-fan = 128: the most sorted runs an external sorter merges at once.
extern const ConfigOption<int32_t> kSortMaxFan;
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

// Checkpointing (Flink's CheckpointingOptions; 2.x keys, 1.x keys as deprecated keys).
/// execution.checkpointing.interval: unset = checkpointing off (ms, at least 10: Flink's
/// CheckpointCoordinatorConfiguration.MINIMAL_CHECKPOINT_TIME).
extern const ConfigOption<int64_t> kCheckpointingInterval;
/// execution.checkpointing.interval-during-backlog: unset = the interval; 0 = none while a source reports
/// backlog (FLIP-309) (ms).
extern const ConfigOption<int64_t> kCheckpointingIntervalDuringBacklog;
/// execution.checkpointing.mode = EXACTLY_ONCE (or AT_LEAST_ONCE).
extern const ConfigOption<std::string> kCheckpointingConsistencyMode;
extern const ConfigOption<int64_t> kCheckpointingTimeout;        ///< execution.checkpointing.timeout = 10 min (ms)
extern const ConfigOption<int64_t> kMinPauseBetweenCheckpoints;  ///< execution.checkpointing.min-pause = 0 (ms)
/// execution.checkpointing.max-concurrent-checkpoints = 1
extern const ConfigOption<int32_t> kMaxConcurrentCheckpoints;
/// execution.checkpointing.tolerable-failed-checkpoints = 0
extern const ConfigOption<int32_t> kTolerableFailureNumber;
/// execution.checkpointing.unaligned.enabled = false (old: execution.checkpointing.unaligned)
extern const ConfigOption<bool> kEnableUnaligned;
/// execution.checkpointing.aligned-checkpoint-timeout = 0 (ms; old: execution.checkpointing.alignment-timeout)
extern const ConfigOption<int64_t> kAlignedCheckpointTimeout;
/// execution.checkpointing.dir: unset (old: state.checkpoints.dir)
extern const ConfigOption<std::string> kCheckpointsDirectory;
/// execution.checkpointing.savepoint-dir: unset (old: state.savepoints.dir)
extern const ConfigOption<std::string> kSavepointDirectory;
/// execution.checkpointing.num-retained = 1, at least 1 (old: state.checkpoints.num-retained)
extern const ConfigOption<int32_t> kMaxRetainedCheckpoints;
/// execution.checkpointing.externalized-checkpoint-retention = NO_EXTERNALIZED_CHECKPOINTS
/// (or DELETE_ON_CANCELLATION, RETAIN_ON_CANCELLATION)
extern const ConfigOption<std::string> kExternalizedCheckpointRetention;
/// execution.checkpointing.incremental = false (old: state.backend.incremental)
extern const ConfigOption<bool> kIncrementalCheckpoints;
/// execution.checkpointing.checkpoints-after-tasks-finish = true (FLIP-147; old: ...-finish.enabled)
extern const ConfigOption<bool> kEnableCheckpointsAfterTasksFinish;

// State backend (StateBackendOptions).
/// state.backend.type = hashmap (or rocksdb; old: state.backend)
extern const ConfigOption<std::string> kStateBackend;
// RocksDB state backend memory (Flink's RocksDBOptions / RocksDBConfigurableOptions, TaskManagerOptions).
/// taskmanager.memory.managed.size: unset = 128 mb, Flink's default for local execution (bytes, per TaskManager)
extern const ConfigOption<int64_t> kManagedMemorySize;
/// taskmanager.memory.managed.fraction = 0.4 (of taskmanager.memory.flink.size, when that is set)
extern const ConfigOption<double> kManagedMemoryFraction;
/// taskmanager.memory.flink.size: unset (bytes; the base of the managed fraction)
extern const ConfigOption<int64_t> kTotalFlinkMemory;
/// state.backend.rocksdb.memory.managed = true
extern const ConfigOption<bool> kRocksDBMemoryManaged;
/// state.backend.rocksdb.memory.fixed-per-slot: unset (bytes; overrides the managed memory)
extern const ConfigOption<int64_t> kRocksDBFixedMemoryPerSlot;
/// state.backend.rocksdb.memory.write-buffer-ratio = 0.5
extern const ConfigOption<double> kRocksDBWriteBufferRatio;
/// state.backend.rocksdb.memory.high-prio-pool-ratio = 0.1
extern const ConfigOption<double> kRocksDBHighPriorityPoolRatio;
/// state.backend.rocksdb.writebuffer.size = 64 mb (bytes, per column family)
extern const ConfigOption<int64_t> kRocksDBWriteBufferSize;
/// state.backend.rocksdb.writebuffer.count = 2
extern const ConfigOption<int32_t> kRocksDBMaxWriteBufferNumber;
/// state.backend.rocksdb.block.cache-size = 8 mb (bytes; only without managed or fixed memory)
extern const ConfigOption<int64_t> kRocksDBBlockCacheSize;
/// state.backend.rocksdb.use-bloom-filter = false
extern const ConfigOption<bool> kRocksDBUseBloomFilter;
/// state.backend.rocksdb.bloom-filter.bits-per-key = 10.0
extern const ConfigOption<double> kRocksDBBloomFilterBitsPerKey;

// Restart strategies (RestartStrategyOptions) and failover (JobManagerOptions).
/// restart-strategy.type: none|off|disable, fixed-delay, failure-rate, exponential-delay (also Flink's
/// fixeddelay, failurerate, exponentialdelay); unset = derived from checkpointing (FLINK-33738). Old key:
/// restart-strategy.
extern const ConfigOption<std::string> kRestartStrategy;
/// jobmanager.execution.failover-strategy = region: what a task failure restarts (region: its failover region,
/// Flink's RestartPipelinedRegionFailoverStrategy; full: every task).
extern const ConfigOption<std::string> kFailoverStrategy;
extern const ConfigOption<int32_t> kRestartStrategyFixedDelayAttempts;  ///< restart-strategy.fixed-delay.attempts = 1
extern const ConfigOption<int64_t> kRestartStrategyFixedDelayDelay;     ///< restart-strategy.fixed-delay.delay = 1 s (ms)
/// restart-strategy.failure-rate.max-failures-per-interval = 1
extern const ConfigOption<int32_t> kRestartStrategyFailureRateMaxFailuresPerInterval;
/// restart-strategy.failure-rate.failure-rate-interval = 1 min (ms)
extern const ConfigOption<int64_t> kRestartStrategyFailureRateFailureRateInterval;
extern const ConfigOption<int64_t> kRestartStrategyFailureRateDelay;  ///< restart-strategy.failure-rate.delay = 1 s (ms)
/// restart-strategy.exponential-delay.initial-backoff = 1 s (ms)
extern const ConfigOption<int64_t> kRestartStrategyExponentialDelayInitialBackoff;
/// restart-strategy.exponential-delay.max-backoff = 1 min (ms; FLINK-33736)
extern const ConfigOption<int64_t> kRestartStrategyExponentialDelayMaxBackoff;
/// restart-strategy.exponential-delay.backoff-multiplier = 1.5 (FLINK-33736; must be > 1)
extern const ConfigOption<double> kRestartStrategyExponentialDelayBackoffMultiplier;
/// restart-strategy.exponential-delay.reset-backoff-threshold = 1 h (ms)
extern const ConfigOption<int64_t> kRestartStrategyExponentialDelayResetBackoffThreshold;
/// restart-strategy.exponential-delay.jitter-factor = 0.1 (in [0, 1])
extern const ConfigOption<double> kRestartStrategyExponentialDelayJitterFactor;
/// restart-strategy.exponential-delay.attempts-before-reset-backoff = 2147483647 (unlimited, FLINK-32895)
extern const ConfigOption<int32_t> kRestartStrategyExponentialDelayAttempts;
/// jobmanager.execution.failover-strategy = region (or full)
extern const ConfigOption<std::string> kExecutionFailoverStrategy;

// State recovery (StateRecoveryOptions; 1.x keys as deprecated keys).
/// execution.state-recovery.path: unset (old: execution.savepoint.path)
extern const ConfigOption<std::string> kSavepointPath;
/// execution.state-recovery.ignore-unclaimed-state = false (old: execution.savepoint.ignore-unclaimed-state)
extern const ConfigOption<bool> kSavepointIgnoreUnclaimedState;
/// execution.state-recovery.claim-mode = NO_CLAIM (or CLAIM; old: execution.savepoint-restore-mode)
extern const ConfigOption<std::string> kRestoreMode;

// Deterministic failure injection for tests: the named operator's subtask throws after it has received N
// records, in each of the first K attempts.
/// sluice.test.fail-operator: an operator name or a substring of it; unset = no injected failure
extern const ConfigOption<std::string> kTestFailOperator;
/// sluice.test.fail-after-records = -1 (off): N, the records the subtask receives before it throws
extern const ConfigOption<int64_t> kTestFailAfterRecords;
extern const ConfigOption<int32_t> kTestFailSubtask;   ///< sluice.test.fail-subtask = 0: the subtask index
/// sluice.test.fail-attempts = 1: K, how many attempts (the first, then restarts) fail
extern const ConfigOption<int32_t> kTestFailAttempts;
}  // namespace options

}  // namespace sluice

#include "common/config.h"

#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"

namespace sluice {
namespace {

std::string writeTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigurationTest, DefaultsWhenUnset) {
  Configuration c;
  EXPECT_EQ(c.get(options::kParallelismDefault), 1);
  EXPECT_EQ(c.get(options::kMaxParallelism), -1);
  EXPECT_EQ(c.get(options::kRuntimeMode), "STREAMING");
  EXPECT_TRUE(c.get(options::kOperatorChaining));
  EXPECT_EQ(c.get(options::kBufferTimeout), 100);  // "100 ms"
}

TEST(ConfigurationTest, LaterSourcesWin) {
  // defaults < YAML file < -D < SET: each layer is a later set() call on the same Configuration.
  std::string path = writeTemp("conf_precedence.yaml",
                               "parallelism.default: 3\n"
                               "pipeline:\n"
                               "  name: from-file\n"
                               "taskmanager.numberOfTaskSlots: 5\n");
  Configuration c;
  c.loadYaml(path, false);
  EXPECT_EQ(c.get(options::kParallelismDefault), 3);
  EXPECT_EQ(c.get(options::kPipelineName), "from-file");  // nested YAML keys are flattened
  c.setFromKeyValue("parallelism.default=4");           // -D
  EXPECT_EQ(c.get(options::kParallelismDefault), 4);
  c.set("parallelism.default", "2");                    // SET
  EXPECT_EQ(c.get(options::kParallelismDefault), 2);
  EXPECT_EQ(c.get(options::kNumberOfTaskSlots), 5);     // untouched by later layers
}

TEST(ConfigurationTest, UnknownKeyNamesKeyAndClosest) {
  Configuration c;
  try {
    c.set("parallelism.defualt", "2");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'parallelism.defualt'"), std::string::npos) << m;
    EXPECT_NE(m.find("Did you mean 'parallelism.default'"), std::string::npos) << m;
  }
}

TEST(ConfigurationTest, AutoWatermarkIntervalIsAcceptedWithFlinksDefault) {
  Configuration c;
  EXPECT_EQ(c.getString("pipeline.auto-watermark-interval"), "200 ms");  // Flink's default
  c.set("pipeline.auto-watermark-interval", "1 s");
  EXPECT_EQ(c.getString("pipeline.auto-watermark-interval"), "1 s");
  EXPECT_THROW(c.set("pipeline.auto-watermark-interval", "soon"), ConfigError);
}

TEST(ConfigurationTest, UnsupportedFlinkKeySaysNotSupportedYet) {
  Configuration c;
  try {
    c.set("state.backend.changelog.enabled", "true");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Configuration key 'state.backend.changelog.enabled' is a Flink option that Sluice does not support "
              "yet: the changelog state backend is not implemented.");
  }
  try {
    c.set("execution.checkpointing.storage", "filesystem");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("does not support yet: choosing the checkpoint storage"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(c.values().empty());
}

// A typo inside a family Sluice implements gets the closest key, not "not supported yet".
TEST(ConfigurationTest, TypoInCheckpointingKeySuggestsTheKey) {
  Configuration c;
  try {
    c.set("execution.checkpointing.intervall", "10 s");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("Did you mean 'execution.checkpointing.interval'"), std::string::npos)
        << e.what();
  }
}

// Defaults from Flink's CheckpointingOptions, StateBackendOptions, RestartStrategyOptions, JobManagerOptions and
// StateRecoveryOptions (durations in ms: 10 min = 600000, 1 min = 60000, 1 h = 3600000).
TEST(ConfigurationTest, CheckpointingStateAndRestartDefaults) {
  Configuration c;
  EXPECT_EQ(c.getOptional(options::kCheckpointingInterval), std::nullopt);
  EXPECT_EQ(c.getOptional(options::kCheckpointingIntervalDuringBacklog), std::nullopt);
  EXPECT_EQ(c.get(options::kCheckpointingConsistencyMode), "EXACTLY_ONCE");
  EXPECT_EQ(c.get(options::kCheckpointingTimeout), 600000);
  EXPECT_EQ(c.get(options::kMinPauseBetweenCheckpoints), 0);
  EXPECT_EQ(c.get(options::kMaxConcurrentCheckpoints), 1);
  EXPECT_EQ(c.get(options::kTolerableFailureNumber), 0);
  EXPECT_FALSE(c.get(options::kEnableUnaligned));
  EXPECT_EQ(c.get(options::kAlignedCheckpointTimeout), 0);
  EXPECT_EQ(c.getOptional(options::kCheckpointsDirectory), std::nullopt);
  EXPECT_EQ(c.getOptional(options::kSavepointDirectory), std::nullopt);
  EXPECT_EQ(c.get(options::kMaxRetainedCheckpoints), 1);
  EXPECT_EQ(c.get(options::kExternalizedCheckpointRetention), "NO_EXTERNALIZED_CHECKPOINTS");
  EXPECT_FALSE(c.get(options::kIncrementalCheckpoints));
  EXPECT_TRUE(c.get(options::kEnableCheckpointsAfterTasksFinish));
  EXPECT_EQ(c.get(options::kStateBackend), "hashmap");
  EXPECT_EQ(c.getOptional(options::kRestartStrategy), std::nullopt);
  EXPECT_EQ(c.get(options::kRestartStrategyFixedDelayAttempts), 1);
  EXPECT_EQ(c.get(options::kRestartStrategyFixedDelayDelay), 1000);
  EXPECT_EQ(c.get(options::kRestartStrategyFailureRateMaxFailuresPerInterval), 1);
  EXPECT_EQ(c.get(options::kRestartStrategyFailureRateFailureRateInterval), 60000);
  EXPECT_EQ(c.get(options::kRestartStrategyFailureRateDelay), 1000);
  EXPECT_EQ(c.get(options::kRestartStrategyExponentialDelayInitialBackoff), 1000);
  EXPECT_EQ(c.get(options::kRestartStrategyExponentialDelayMaxBackoff), 60000);
  EXPECT_DOUBLE_EQ(c.get(options::kRestartStrategyExponentialDelayBackoffMultiplier), 1.5);
  EXPECT_EQ(c.get(options::kRestartStrategyExponentialDelayResetBackoffThreshold), 3600000);
  EXPECT_DOUBLE_EQ(c.get(options::kRestartStrategyExponentialDelayJitterFactor), 0.1);
  EXPECT_EQ(c.get(options::kRestartStrategyExponentialDelayAttempts), 2147483647);
  EXPECT_EQ(c.get(options::kExecutionFailoverStrategy), "region");
  EXPECT_EQ(c.getOptional(options::kSavepointPath), std::nullopt);
  EXPECT_FALSE(c.get(options::kSavepointIgnoreUnclaimedState));
  EXPECT_EQ(c.get(options::kRestoreMode), "NO_CLAIM");
  EXPECT_EQ(c.getOptional(options::kTestFailOperator), std::nullopt);
  EXPECT_EQ(c.get(options::kTestFailAfterRecords), -1);
  EXPECT_EQ(c.get(options::kTestFailSubtask), 0);
  EXPECT_EQ(c.get(options::kTestFailAttempts), 1);
  // Reading an option without default through get() is an engine bug, not a user error.
  EXPECT_THROW(c.get(options::kCheckpointingInterval), InternalError);
}

TEST(ConfigurationTest, CheckpointingValuesParse) {
  Configuration c;
  c.set("execution.checkpointing.interval", "10 min");
  EXPECT_EQ(c.getOptional(options::kCheckpointingInterval), 600000);
  c.set("execution.checkpointing.interval", "500");  // a plain number is ms
  EXPECT_EQ(c.get(options::kCheckpointingInterval), 500);
  c.set("execution.checkpointing.interval-during-backlog", "0");
  EXPECT_EQ(c.getOptional(options::kCheckpointingIntervalDuringBacklog), 0);
  c.set("execution.checkpointing.mode", "at_least_once");
  EXPECT_EQ(c.get(options::kCheckpointingConsistencyMode), "AT_LEAST_ONCE");
  c.set("execution.checkpointing.externalized-checkpoint-retention", "retain_on_cancellation");
  EXPECT_EQ(c.get(options::kExternalizedCheckpointRetention), "RETAIN_ON_CANCELLATION");
  c.set("state.backend.type", "RocksDB");
  EXPECT_EQ(c.get(options::kStateBackend), "rocksdb");
  c.set("jobmanager.execution.failover-strategy", "full");
  EXPECT_EQ(c.get(options::kExecutionFailoverStrategy), "full");
  c.set("execution.state-recovery.claim-mode", "claim");
  EXPECT_EQ(c.get(options::kRestoreMode), "CLAIM");
  c.set("execution.checkpointing.dir", "file:///tmp/chk");
  EXPECT_EQ(c.getOptional(options::kCheckpointsDirectory), "file:///tmp/chk");
  c.set("sluice.test.fail-operator", "GroupAggregate");
  c.set("sluice.test.fail-after-records", "100");
  EXPECT_EQ(c.getOptional(options::kTestFailOperator), "GroupAggregate");
  EXPECT_EQ(c.get(options::kTestFailAfterRecords), 100);
}

// Flink's execution.checkpointing.unaligned.forced is accepted (it only matters for iterations, which Sluice
// lacks) and still checked as a boolean.
TEST(ConfigurationTest, ForcedUnalignedCheckpointsIsAcceptedAsABoolean) {
  Configuration c;
  EXPECT_NO_THROW(c.set("execution.checkpointing.unaligned.forced", "true"));
  EXPECT_THROW(c.set("execution.checkpointing.unaligned.forced", "always"), ConfigError);
}

// Flink 1.x names still work and set the 2.x option; the later setting wins whichever name it uses.
TEST(ConfigurationTest, DeprecatedKeysSetTheOption) {
  Configuration c;
  c.set("state.checkpoints.dir", "/tmp/a");
  c.set("state.checkpoints.num-retained", "3");
  c.set("state.savepoints.dir", "/tmp/s");
  c.set("state.backend.incremental", "true");
  c.set("execution.checkpointing.unaligned", "true");
  c.set("execution.checkpointing.alignment-timeout", "30 s");
  c.set("execution.checkpointing.checkpoints-after-tasks-finish.enabled", "false");
  c.set("state.backend", "rocksdb");
  c.set("restart-strategy", "fixed-delay");
  c.set("execution.savepoint.path", "/tmp/sp-1");
  c.set("execution.savepoint.ignore-unclaimed-state", "true");
  c.set("execution.savepoint-restore-mode", "CLAIM");
  EXPECT_EQ(c.get(options::kCheckpointsDirectory), "/tmp/a");
  EXPECT_EQ(c.get(options::kMaxRetainedCheckpoints), 3);
  EXPECT_EQ(c.get(options::kSavepointDirectory), "/tmp/s");
  EXPECT_TRUE(c.get(options::kIncrementalCheckpoints));
  EXPECT_TRUE(c.get(options::kEnableUnaligned));
  EXPECT_EQ(c.get(options::kAlignedCheckpointTimeout), 30000);
  EXPECT_FALSE(c.get(options::kEnableCheckpointsAfterTasksFinish));
  EXPECT_EQ(c.get(options::kStateBackend), "rocksdb");
  EXPECT_EQ(c.get(options::kRestartStrategy), "fixed-delay");
  EXPECT_EQ(c.get(options::kSavepointPath), "/tmp/sp-1");
  EXPECT_TRUE(c.get(options::kSavepointIgnoreUnclaimedState));
  EXPECT_EQ(c.get(options::kRestoreMode), "CLAIM");
  EXPECT_TRUE(c.contains("state.checkpoints.dir"));
  EXPECT_TRUE(c.contains("execution.checkpointing.dir"));
  EXPECT_EQ(c.getString("state.checkpoints.dir"), "/tmp/a");
  EXPECT_EQ(c.values().count("state.checkpoints.dir"), 0u);  // stored under the 2.x key

  c.set("execution.checkpointing.dir", "/tmp/b");
  EXPECT_EQ(c.get(options::kCheckpointsDirectory), "/tmp/b");
  c.set("state.checkpoints.dir", "/tmp/c");
  EXPECT_EQ(c.get(options::kCheckpointsDirectory), "/tmp/c");

  c.reset("state.checkpoints.dir");  // RESET by the old name drops the option's value
  EXPECT_EQ(c.getOptional(options::kCheckpointsDirectory), std::nullopt);
  EXPECT_FALSE(c.contains("execution.checkpointing.dir"));
  EXPECT_THROW(c.reset("state.checkpoints.dirs"), ConfigError);
}

// "restart-strategy" is a deprecated key and also the first level of the nested YAML form.
TEST(ConfigurationTest, NestedYamlUnderADeprecatedKey) {
  std::string path = writeTemp("conf_restart.yaml",
                               "restart-strategy:\n"
                               "  type: failure-rate\n"
                               "  failure-rate:\n"
                               "    delay: 5 s\n"
                               "execution:\n"
                               "  checkpointing:\n"
                               "    unaligned:\n"
                               "      enabled: true\n");
  Configuration c;
  c.loadYaml(path, false);
  EXPECT_EQ(c.get(options::kRestartStrategy), "failure-rate");
  EXPECT_EQ(c.get(options::kRestartStrategyFailureRateDelay), 5000);
  EXPECT_TRUE(c.get(options::kEnableUnaligned));
}

TEST(ConfigurationTest, BadCheckpointingAndRestartValuesNameTheKey) {
  auto message = [](const std::string& key, const std::string& value) {
    Configuration c;
    try {
      c.set(key, value);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message("execution.checkpointing.mode", "EXACTLY"),
            "Invalid value 'EXACTLY' for configuration key 'execution.checkpointing.mode': expected one of "
            "EXACTLY_ONCE, AT_LEAST_ONCE");
  EXPECT_EQ(message("state.backend.type", "filesystem"),
            "Invalid value 'filesystem' for configuration key 'state.backend.type': expected one of hashmap, rocksdb");
  // The message names the key as written, also a deprecated one.
  EXPECT_EQ(message("state.checkpoints.num-retained", "0"),
            "Invalid value '0' for configuration key 'state.checkpoints.num-retained': must be at least 1");
  EXPECT_EQ(message("execution.checkpointing.num-retained", "-2"),
            "Invalid value '-2' for configuration key 'execution.checkpointing.num-retained': must be at least 1");
  EXPECT_EQ(message("execution.checkpointing.interval", "5 ms"),
            "Invalid value '5 ms' for configuration key 'execution.checkpointing.interval': must be at least 10 ms");
  EXPECT_EQ(message("execution.checkpointing.min-pause", "-1 s"),
            "Invalid value '-1 s' for configuration key 'execution.checkpointing.min-pause': must be at least 0 ms");
  EXPECT_EQ(message("execution.checkpointing.max-concurrent-checkpoints", "0"),
            "Invalid value '0' for configuration key 'execution.checkpointing.max-concurrent-checkpoints': must be "
            "at least 1");
  EXPECT_NE(message("execution.checkpointing.timeout", "10 fortnights").find("'execution.checkpointing.timeout'"),
            std::string::npos);
  EXPECT_NE(message("execution.checkpointing.externalized-checkpoint-retention", "KEEP")
                .find("NO_EXTERNALIZED_CHECKPOINTS, DELETE_ON_CANCELLATION, RETAIN_ON_CANCELLATION"),
            std::string::npos);
  EXPECT_NE(message("restart-strategy.type", "forever").find("'restart-strategy.type': expected one of none, off"),
            std::string::npos);
  EXPECT_NE(message("restart-strategy", "forever").find("'restart-strategy': expected one of"), std::string::npos);
  EXPECT_EQ(message("restart-strategy.failure-rate.max-failures-per-interval", "0"),
            "Invalid value '0' for configuration key 'restart-strategy.failure-rate.max-failures-per-interval': "
            "must be at least 1");
  EXPECT_EQ(message("restart-strategy.exponential-delay.initial-backoff", "0 ms"),
            "Invalid value '0 ms' for configuration key 'restart-strategy.exponential-delay.initial-backoff': must "
            "be at least 1 ms");
  EXPECT_NE(message("jobmanager.execution.failover-strategy", "individual").find("expected one of region, full"),
            std::string::npos);
  EXPECT_NE(message("execution.savepoint-restore-mode", "LEGACY").find("expected one of NO_CLAIM, CLAIM"),
            std::string::npos);
  EXPECT_NE(message("execution.checkpointing.unaligned", "maybe").find("'execution.checkpointing.unaligned'"),
            std::string::npos);
  EXPECT_NE(message("sluice.test.fail-after-records", "-2").find("must be at least -1"), std::string::npos);
}

TEST(ConfigurationTest, IllTypedValueNamesKey) {
  Configuration c;
  EXPECT_THROW(c.set("parallelism.default", "two"), ConfigError);
  EXPECT_THROW(c.set("pipeline.operator-chaining.enabled", "yes"), ConfigError);
  EXPECT_THROW(c.set("execution.runtime-mode", "STREAM"), ConfigError);
  EXPECT_THROW(c.set("execution.buffer-timeout", "10 parsecs"), ConfigError);
  try {
    c.set("parallelism.default", "2.5");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("parallelism.default"), std::string::npos);
  }
  // A failed set leaves the previous value.
  EXPECT_EQ(c.get(options::kParallelismDefault), 1);
}

// Counts below 1 (parallelism, slots, TaskManagers, batch rows) are rejected when set, naming the key,
// so SET and -D fail at once rather than when a job starts.
TEST(ConfigurationTest, CountsBelowOneAreRejectedWhenSet) {
  Configuration c;
  for (const char* key :
       {"parallelism.default", "taskmanager.numberOfTaskSlots", "local.number-taskmanager", "sluice.batch.size"}) {
    for (const char* value : {"0", "-3"}) {
      try {
        c.set(key, value);
        FAIL() << key << " = " << value;
      } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()),
                  fmt::format("Invalid value '{}' for configuration key '{}': must be at least 1", value, key));
      }
    }
    c.set(key, "1");
    EXPECT_EQ(c.getString(key), "1");
  }
  // pipeline.max-parallelism keeps -1 (derive it).
  c.set("pipeline.max-parallelism", "-1");
}

TEST(ConfigurationTest, DurationsAndSizes) {
  EXPECT_EQ(parseDurationMs("k", "250"), 250);
  EXPECT_EQ(parseDurationMs("k", "2 s"), 2000);
  EXPECT_EQ(parseDurationMs("k", "3min"), 180000);
  EXPECT_EQ(parseDurationMs("k", "1 h"), 3600000);
  EXPECT_EQ(parseMemorySize("k", "32kb"), 32 * 1024);
  EXPECT_EQ(parseMemorySize("k", "64 mb"), 64LL * 1024 * 1024);
  EXPECT_THROW(parseMemorySize("k", "mb"), ConfigError);
}

// Flink's MemorySize units, powers of 1024: 1 t = 1024^4 = 1099511627776 bytes.
TEST(ConfigurationTest, MemorySizeUnitsAsFlink) {
  EXPECT_EQ(parseMemorySize("k", "1tb"), 1099511627776LL);
  EXPECT_EQ(parseMemorySize("k", "2 t"), 2199023255552LL);
  EXPECT_EQ(parseMemorySize("k", "1 tebibytes"), 1099511627776LL);
  EXPECT_EQ(parseMemorySize("k", "3 gibibytes"), 3221225472LL);
  EXPECT_EQ(parseMemorySize("k", "7b"), 7);
  EXPECT_EQ(parseMemorySize("k", "7 bytes"), 7);
  auto message = [](const std::string& v) {
    try {
      parseMemorySize("taskmanager.memory.network.min", v);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message("1pb").find("unknown memory unit 'pb'"), std::string::npos) << message("1pb");
  EXPECT_NE(message("1pb").find("taskmanager.memory.network.min"), std::string::npos);
  EXPECT_NE(message("-1mb").find("negative"), std::string::npos) << message("-1mb");
  // 2^23 t = 2^63 bytes: one past the largest size.
  EXPECT_NE(message("8388608t").find("64 bits"), std::string::npos) << message("8388608t");
  EXPECT_EQ(parseMemorySize("k", "8388607t"), 8388607LL << 40);
}

TEST(ConfigurationTest, EnumIsCaseInsensitiveAndCanonical) {
  Configuration c;
  c.set("execution.runtime-mode", "batch");
  EXPECT_EQ(c.get(options::kRuntimeMode), "BATCH");
}

TEST(ConfigurationTest, MalformedYamlNamesFileAndLine) {
  std::string path = writeTemp("conf_bad.yaml", "parallelism.default: 2\nfoo: [unclosed\n");
  Configuration c;
  try {
    c.loadYaml(path, false);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::string unknown = writeTemp("conf_unknown.yaml", "parallelism.default: 2\nnot.a.key: 1\n");
  try {
    c.loadYaml(unknown, false);
    FAIL();
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(unknown + ":2:"), std::string::npos) << m;  // line 2 holds the unknown key
    EXPECT_NE(m.find("not.a.key"), std::string::npos) << m;
  }
}

TEST(ConfigurationTest, MissingOptionalFileIsFine) {
  Configuration c;
  EXPECT_NO_THROW(c.loadYaml("/nonexistent/config.yaml", true));
  EXPECT_THROW(c.loadYaml("/nonexistent/config.yaml", false), ConfigError);
}

}  // namespace
}  // namespace sluice

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

TEST(ConfigurationTest, UnsupportedFlinkKeySaysNotSupportedYet) {
  Configuration c;
  try {
    c.set("execution.checkpointing.interval", "10s");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Configuration key 'execution.checkpointing.interval' is a Flink option that Sluice does not support "
              "yet: checkpointing is not implemented.");
  }
  EXPECT_THROW(c.set("state.backend.type", "rocksdb"), ConfigError);
  EXPECT_TRUE(c.values().empty());
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

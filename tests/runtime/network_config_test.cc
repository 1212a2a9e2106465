#include "runtime/network/network_config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"

namespace sluice::runtime::network {
namespace {

TEST(NetworkConfigTest, FlinkDefaults) {
  Configuration conf;
  BufferDebloatConfiguration d = BufferDebloatConfiguration::fromConfiguration(conf);
  EXPECT_FALSE(d.enabled);
  EXPECT_EQ(d.target_ms, 1000);
  EXPECT_EQ(d.period_ms, 200);
  EXPECT_EQ(d.samples, 20);
  EXPECT_EQ(d.threshold_percentages, 25);
  EXPECT_EQ(d.max_buffer_size, 32 * 1024);
  EXPECT_EQ(d.min_buffer_size, 256);
  EXPECT_EQ(d.starting_buffer_size, 1024);
  EXPECT_EQ(d.stable_periods, 10);

  NetworkBufferConfiguration n = NetworkBufferConfiguration::fromConfiguration(conf);
  EXPECT_EQ(n.segment_size, 32768);
  EXPECT_EQ(n.buffers_per_channel, 2);
  EXPECT_EQ(n.floating_buffers_per_gate, 8);
  EXPECT_EQ(n.max_buffers_per_channel, 10);
  EXPECT_EQ(n.network_memory_min, 64LL << 20);
  EXPECT_EQ(n.network_memory_max, 1LL << 30);
  EXPECT_DOUBLE_EQ(n.network_memory_fraction, 0.1);
}

TEST(NetworkConfigTest, NetworkMemoryIsFractionClampedToMinMax) {
  Configuration conf;
  NetworkBufferConfiguration n = NetworkBufferConfiguration::fromConfiguration(conf);
  // 0.1 * 1 GiB = 107374182 B, inside [64 MiB, 1 GiB]; / 32768 = 3276 segments (3276.8 truncated)
  EXPECT_EQ(n.networkMemoryBytes(1LL << 30), 107374182);
  EXPECT_EQ(n.numberOfSegments(1LL << 30), 3276);
  // 0.1 * 100 MiB = 10 MiB < 64 MiB: the minimum, 64 MiB / 32 KiB = 2048 segments.
  EXPECT_EQ(n.numberOfSegments(100LL << 20), 2048);
  // 0.1 * 100 GiB = 10 GiB > 1 GiB: the maximum, 1 GiB / 32 KiB = 32768 segments.
  EXPECT_EQ(n.numberOfSegments(100LL << 30), 32768);
  // min == max: a fixed size (4 MiB / 32 KiB = 128).
  conf.set("taskmanager.memory.network.min", "4 mb");
  conf.set("taskmanager.memory.network.max", "4 mb");
  EXPECT_EQ(NetworkBufferConfiguration::fromConfiguration(conf).numberOfSegments(1LL << 40), 128);
}

void expectConfigErrorNaming(const Configuration& conf, const std::string& key) {
  try {
    BufferDebloatConfiguration::fromConfiguration(conf);
    NetworkBufferConfiguration::fromConfiguration(conf);
    FAIL() << "expected a ConfigError naming " << key;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(NetworkConfigTest, ValidationNamesTheKey) {
  {
    Configuration c;
    c.set("taskmanager.network.memory.buffer-debloat.samples", "0");
    expectConfigErrorNaming(c, "taskmanager.network.memory.buffer-debloat.samples");
  }
  {
    Configuration c;
    c.set("taskmanager.network.memory.buffer-debloat.target", "0 ms");
    expectConfigErrorNaming(c, "taskmanager.network.memory.buffer-debloat.target");
  }
  {
    Configuration c;
    c.set("taskmanager.memory.min-segment-size", "64 kb");  // above the 32 kb max
    expectConfigErrorNaming(c, "taskmanager.memory.min-segment-size");
  }
  {
    Configuration c;
    c.set("taskmanager.memory.min-segment-size", "0");
    expectConfigErrorNaming(c, "taskmanager.memory.min-segment-size");
  }
  {
    Configuration c;
    c.set("taskmanager.memory.segment-size", "0");
    expectConfigErrorNaming(c, "taskmanager.memory.segment-size");
  }
  {
    Configuration c;
    c.set("taskmanager.network.memory.buffer-debloat.threshold-percentages", "101");
    expectConfigErrorNaming(c, "taskmanager.network.memory.buffer-debloat.threshold-percentages");
  }
  {
    Configuration c;
    c.set("taskmanager.memory.segment-size", "3000 b");  // not a power of two
    EXPECT_THROW(NetworkBufferConfiguration::fromConfiguration(c), ConfigError);
  }
  {
    Configuration c;
    c.set("taskmanager.memory.network.min", "2 gb");
    c.set("taskmanager.memory.network.max", "1 gb");
    expectConfigErrorNaming(c, "taskmanager.memory.network.max");
  }
}

// The error blames the key the user set, with its value: never a key left at its default.
std::string configErrorOf(const Configuration& conf) {
  try {
    BufferDebloatConfiguration::fromConfiguration(conf);
    NetworkBufferConfiguration::fromConfiguration(conf);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(NetworkConfigTest, ErrorsBlameTheKeyTheUserSet) {
  {
    Configuration c;
    c.set("taskmanager.memory.segment-size", "1b");  // below the default min-segment-size of 256 b
    const std::string e = configErrorOf(c);
    EXPECT_NE(e.find("Invalid value '1b' for configuration key 'taskmanager.memory.segment-size'"), std::string::npos)
        << e;
    EXPECT_NE(e.find("256 bytes"), std::string::npos) << e;
  }
  {
    Configuration c;  // both set: the minimum above the segment size is the wrong one
    c.set("taskmanager.memory.segment-size", "1kb");
    c.set("taskmanager.memory.min-segment-size", "2kb");
    EXPECT_NE(configErrorOf(c).find("Invalid value '2kb' for configuration key 'taskmanager.memory.min-segment-size'"),
              std::string::npos)
        << configErrorOf(c);
  }
  {
    Configuration c;  // no network memory at all: not "only 1 of 1 segments" later
    c.set("taskmanager.memory.network.min", "0");
    c.set("taskmanager.memory.network.max", "0");
    const std::string e = configErrorOf(c);
    EXPECT_NE(e.find("Invalid value '0' for configuration key 'taskmanager.memory.network.max'"), std::string::npos) << e;
    EXPECT_NE(e.find("at least one memory segment"), std::string::npos) << e;
  }
  {
    Configuration c;  // 1 tb parses (Flink's MemorySize) and is a valid bound
    c.set("taskmanager.memory.network.min", "1tb");
    c.set("taskmanager.memory.network.max", "1tb");
    EXPECT_EQ(configErrorOf(c), "(accepted)");
    EXPECT_EQ(NetworkBufferConfiguration::fromConfiguration(c).network_memory_min, 1099511627776LL);
  }
}

TEST(NetworkConfigTest, StartingSizeMustLieBetweenTheMinimumAndTheSegmentSize) {
  {
    Configuration c;  // the defaults: 1 kb, between 256 b and 32 kb
    const BufferDebloatConfiguration d = BufferDebloatConfiguration::fromConfiguration(c);
    EXPECT_EQ(d.starting_buffer_size, 1024);
    EXPECT_EQ(d.initialBufferSize(), 32768);  // debloating off: producers fill whole segments
    c.set("taskmanager.network.memory.buffer-debloat.enabled", "true");
    EXPECT_EQ(BufferDebloatConfiguration::fromConfiguration(c).initialBufferSize(), 1024);
  }
  {
    Configuration c;  // the bounds themselves are valid
    c.set("taskmanager.memory.starting-segment-size", "256 b");
    EXPECT_EQ(BufferDebloatConfiguration::fromConfiguration(c).starting_buffer_size, 256);
    c.set("taskmanager.memory.starting-segment-size", "32 kb");
    EXPECT_EQ(BufferDebloatConfiguration::fromConfiguration(c).starting_buffer_size, 32768);
  }
  for (const char* bad : {"64 b", "64 kb"}) {
    Configuration c;  // below min-segment-size, above segment-size: rejected as Flink, enabled or not
    c.set("taskmanager.memory.starting-segment-size", bad);
    const std::string e = configErrorOf(c);
    EXPECT_NE(
        e.find(fmt::format("Invalid value '{}' for configuration key 'taskmanager.memory.starting-segment-size'", bad)),
        std::string::npos)
        << e;
    EXPECT_NE(e.find("between 'taskmanager.memory.min-segment-size' (256 bytes) and 'taskmanager.memory.segment-size' "
                     "(32768 bytes)"),
              std::string::npos)
        << e;
  }
  {
    Configuration c;  // left at its default, the starting size follows a smaller segment size
    c.set("taskmanager.memory.segment-size", "512 b");
    c.set("taskmanager.network.memory.buffer-debloat.enabled", "true");
    EXPECT_EQ(BufferDebloatConfiguration::fromConfiguration(c).initialBufferSize(), 512);
  }
}

}  // namespace
}  // namespace sluice::runtime::network

#include "runtime/network/network_config.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::runtime::network {
namespace {

[[noreturn]] void invalid(const std::string& key, const std::string& value, const std::string& why) {
  throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': {}", value, key, why));
}

int32_t sizeAsInt(const Configuration& config, const ConfigOption<int64_t>& option) {
  const int64_t v = config.get(option);
  if (v <= 0) invalid(option.key(), config.getString(option.key()), "must be greater than 0 bytes");
  if (v > std::numeric_limits<int32_t>::max())
    invalid(option.key(), config.getString(option.key()), "must be smaller than 2 gb");
  return static_cast<int32_t>(v);
}

}  // namespace

BufferDebloatConfiguration BufferDebloatConfiguration::fromConfiguration(const Configuration& config) {
  BufferDebloatConfiguration c;
  c.enabled = config.get(options::kBufferDebloatEnabled);
  c.max_buffer_size = sizeAsInt(config, options::kMemorySegmentSize);
  c.min_buffer_size = sizeAsInt(config, options::kMinSegmentSize);
  if (c.max_buffer_size < c.min_buffer_size) {
    // Name the key the user set: a segment size below the default minimum is the segment size's fault.
    if (!config.contains(options::kMinSegmentSize.key())) {
      invalid(options::kMemorySegmentSize.key(), config.getString(options::kMemorySegmentSize.key()),
              fmt::format("must be at least '{}' ({} bytes by default), the smallest buffer size buffer debloating "
                          "may choose; set both to go lower",
                          options::kMinSegmentSize.key(), c.min_buffer_size));
    }
    invalid(options::kMinSegmentSize.key(), config.getString(options::kMinSegmentSize.key()),
            fmt::format("must not exceed '{}' ({} bytes)", options::kMemorySegmentSize.key(), c.max_buffer_size));
  }
  const int32_t starting = sizeAsInt(config, options::kStartingSegmentSize);
  if (config.contains(options::kStartingSegmentSize.key())) {
    // Flink's BufferDebloatConfiguration: min-segment-size <= starting-segment-size <= segment-size.
    if (starting < c.min_buffer_size || starting > c.max_buffer_size) {
      invalid(options::kStartingSegmentSize.key(), config.getString(options::kStartingSegmentSize.key()),
              fmt::format("must be between '{}' ({} bytes) and '{}' ({} bytes)", options::kMinSegmentSize.key(),
                          c.min_buffer_size, options::kMemorySegmentSize.key(), c.max_buffer_size));
    }
    c.starting_buffer_size = starting;
  } else {
    // The default (1 kb) outside the bounds: Flink rejects the configuration until starting-segment-size is set
    // too; Sluice starts at the nearest bound, so a small segment-size alone stays valid.
    c.starting_buffer_size = std::clamp(starting, c.min_buffer_size, c.max_buffer_size);
  }
  c.samples = config.get(options::kBufferDebloatSamples);
  if (c.samples <= 0) {
    invalid(options::kBufferDebloatSamples.key(), config.getString(options::kBufferDebloatSamples.key()),
            "must be greater than 0");
  }
  c.target_ms = config.get(options::kBufferDebloatTarget);
  if (c.target_ms <= 0) {
    invalid(options::kBufferDebloatTarget.key(), config.getString(options::kBufferDebloatTarget.key()),
            "must be greater than 0 ms");
  }
  c.period_ms = config.get(options::kBufferDebloatPeriod);
  if (c.period_ms <= 0) {
    invalid(options::kBufferDebloatPeriod.key(), config.getString(options::kBufferDebloatPeriod.key()),
            "must be greater than 0 ms");
  }
  c.threshold_percentages = config.get(options::kBufferDebloatThresholdPercentages);
  if (c.threshold_percentages < 0 || c.threshold_percentages > 100) {
    invalid(options::kBufferDebloatThresholdPercentages.key(),
            config.getString(options::kBufferDebloatThresholdPercentages.key()), "must be between 0 and 100");
  }
  c.stable_periods = config.get(options::kBufferDebloatStablePeriods);
  if (c.stable_periods < 0) {
    invalid(options::kBufferDebloatStablePeriods.key(), config.getString(options::kBufferDebloatStablePeriods.key()),
            "must not be negative");
  }
  return c;
}

NetworkBufferConfiguration NetworkBufferConfiguration::fromConfiguration(const Configuration& config) {
  NetworkBufferConfiguration c;
  c.segment_size = sizeAsInt(config, options::kMemorySegmentSize);
  if ((c.segment_size & (c.segment_size - 1)) != 0) {
    invalid(options::kMemorySegmentSize.key(), config.getString(options::kMemorySegmentSize.key()),
            "must be a power of two");
  }
  auto count = [&](const ConfigOption<int32_t>& option, int32_t at_least) {
    const int32_t v = config.get(option);
    if (v < at_least) invalid(option.key(), config.getString(option.key()), fmt::format("must be at least {}", at_least));
    return v;
  };
  c.buffers_per_channel = count(options::kNetworkBuffersPerChannel, 0);
  c.floating_buffers_per_gate = count(options::kNetworkFloatingBuffersPerGate, 0);
  c.max_buffers_per_channel = count(options::kNetworkMaxBuffersPerChannel, 1);
  c.network_memory_min = config.get(options::kNetworkMemoryMin);
  c.network_memory_max = config.get(options::kNetworkMemoryMax);
  if (c.network_memory_min < 0) {
    invalid(options::kNetworkMemoryMin.key(), config.getString(options::kNetworkMemoryMin.key()), "must not be negative");
  }
  if (c.network_memory_max < c.network_memory_min) {
    invalid(options::kNetworkMemoryMax.key(), config.getString(options::kNetworkMemoryMax.key()),
            fmt::format("must not be smaller than '{}' ({} bytes)", options::kNetworkMemoryMin.key(),
                        c.network_memory_min));
  }
  if (c.network_memory_max < c.segment_size) {
    // Not even one buffer: name the bound that allows none (as Flink rejects network memory below a page).
    invalid(options::kNetworkMemoryMax.key(), config.getString(options::kNetworkMemoryMax.key()),
            fmt::format("the network memory must hold at least one memory segment of '{}' ({} bytes)",
                        options::kMemorySegmentSize.key(), c.segment_size));
  }
  c.network_memory_fraction = config.get(options::kNetworkMemoryFraction);
  if (!(c.network_memory_fraction >= 0.0 && c.network_memory_fraction < 1.0)) {
    invalid(options::kNetworkMemoryFraction.key(), config.getString(options::kNetworkMemoryFraction.key()),
            "must be at least 0 and below 1");
  }
  return c;
}

int64_t NetworkBufferConfiguration::networkMemoryBytes(int64_t total_flink_memory_bytes) const {
  const double derived = network_memory_fraction * static_cast<double>(std::max<int64_t>(0, total_flink_memory_bytes));
  const int64_t bytes = static_cast<int64_t>(derived);
  return std::clamp(bytes, network_memory_min, network_memory_max);
}

int32_t NetworkBufferConfiguration::numberOfSegments(int64_t total_flink_memory_bytes) const {
  const int64_t n = networkMemoryBytes(total_flink_memory_bytes) / segment_size;
  return static_cast<int32_t>(std::clamp<int64_t>(n, 1, std::numeric_limits<int32_t>::max()));
}

}  // namespace sluice::runtime::network

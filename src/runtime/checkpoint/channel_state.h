#pragma once
/// Channel state: the in-flight data an unaligned checkpoint stores (Flink's InputChannelStateHandle and
/// ResultSubpartitionStateHandle, FLIP-76). Plain values; no I/O.
///
/// The bytes of an entry are whole records in the network's record layout (runtime/network
/// record_serializer.h: u32 length, then the record: a kind byte and the RowBatch or object batch bytes,
/// stream_element_codec.h), in channel order.
///  - Input state of a consumer subtask, per channel: the records it processed after its snapshot and
///    before that channel's barrier arrived.
///  - Output state of a producer subtask, per subpartition: the records its barrier overtook there.
/// On restore, for each old channel, the consumer's input state and then the producer's output state are
/// the records to replay before any new one (ChannelReplay).

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::runtime::checkpoint {

/// In-flight records of one input channel of a subtask.
struct InputChannelStateEntry {
  int32_t input = 0;             ///< index into the vertex's input edges (JobVertex::inputs)
  int32_t producer_subtask = 0;  ///< the producing subtask of that edge
  std::string bytes;
  bool operator==(const InputChannelStateEntry&) const = default;
};

/// In-flight records of one output subpartition of a subtask.
struct OutputChannelStateEntry {
  int32_t output = 0;            ///< index into the vertex's output edges (JobVertex::outputs)
  int32_t consumer_subtask = 0;  ///< the consuming subtask of that edge
  std::string bytes;
  bool operator==(const OutputChannelStateEntry&) const = default;
};

/// The channel state of one subtask (held by its head operator's OperatorSubtaskState). Entries without
/// bytes are left out.
struct SubtaskChannelState {
  std::vector<InputChannelStateEntry> input;
  std::vector<OutputChannelStateEntry> output;

  bool empty() const { return input.empty() && output.empty(); }
  /// Bytes of in-flight data (Flink's "persisted in-flight data").
  int64_t bytes() const {
    int64_t n = 0;
    for (const auto& e : input) n += static_cast<int64_t>(e.bytes.size());
    for (const auto& e : output) n += static_cast<int64_t>(e.bytes.size());
    return n;
  }
  bool operator==(const SubtaskChannelState&) const = default;
};

/// In-flight records a restored producer subtask sends before any new one (channel_state_assignment.h).
struct ChannelReplay {
  /// [output edge k][subpartition index]: records resent into that channel as they are (the edge keeps its
  /// parallelism on both ends): for each old channel the consumer's recorded input, then the producer's
  /// recorded output.
  std::vector<std::vector<std::string>> channels;
  /// [output edge k]: records of a rescaled edge, routed again through the edge's partitioner (HASH: to the
  /// new subtask owning the record's key group).
  std::vector<std::string> rerouted;

  int64_t bytes() const {
    int64_t n = 0;
    for (const auto& output : channels) {
      for (const auto& b : output) n += static_cast<int64_t>(b.size());
    }
    for (const auto& b : rerouted) n += static_cast<int64_t>(b.size());
    return n;
  }
};

}  // namespace sluice::runtime::checkpoint

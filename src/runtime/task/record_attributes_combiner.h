#pragma once
/// Combines the RecordAttributes of the channels of one input (Flink's RecordAttributesCombiner, FLIP-327).

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/stream_element.h"

namespace sluice::runtime {

/// Remembers the last attributes of every channel of one input and computes the input's attributes by
/// Flink's rules:
///  - an element equal to its channel's previous one is ignored;
///  - the input is backlog when any channel is backlog;
///  - it is not-backlog only when every channel has reported and none is backlog (while a channel has not
///    reported and none is backlog the result is undetermined: nothing is emitted);
///  - a result is emitted only when it differs from the last one emitted.
/// Sluice's addition: a channel that ended (EndOfPartition) counts as reported not-backlog, so a finished
/// producer never keeps its consumer in backlog; an input on which no channel ever sent attributes emits
/// nothing at its end. Task thread only.
class RecordAttributesCombiner {
 public:
  /// `num_channels` >= 0; no channel has reported yet.
  explicit RecordAttributesCombiner(int num_channels);

  /// Attributes arrived on `channel` (0-based, < numChannels). Returns the input's new attributes when
  /// they changed.
  std::optional<RecordAttributes> inputRecordAttributes(int channel, RecordAttributes attributes);
  /// `channel` delivered EndOfPartition. Returns the input's new attributes when they changed.
  std::optional<RecordAttributes> endOfInput(int channel);
  int numChannels() const { return static_cast<int>(last_.size()); }

 private:
  std::optional<RecordAttributes> combine();

  std::vector<int8_t> last_;  ///< per channel: -1 not reported, 0 not backlog, 1 backlog
  int reported_ = 0;
  int backlog_ = 0;  ///< channels whose last attributes are backlog
  std::optional<bool> emitted_;
  bool any_reported_ = false;  ///< a channel sent attributes (an ended channel alone does not count)
};

}  // namespace sluice::runtime

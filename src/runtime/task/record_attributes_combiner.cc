#include "runtime/task/record_attributes_combiner.h"

#include "common/error.h"

namespace sluice::runtime {

RecordAttributesCombiner::RecordAttributesCombiner(int num_channels) {
  SLUICE_CHECK(num_channels >= 0, "a combiner over {} channels", num_channels);
  last_.assign(static_cast<size_t>(num_channels), -1);
}

std::optional<RecordAttributes> RecordAttributesCombiner::inputRecordAttributes(int channel,
                                                                                RecordAttributes attributes) {
  SLUICE_CHECK(channel >= 0 && channel < numChannels(), "record attributes on channel {} of {}", channel,
               numChannels());
  any_reported_ = true;
  int8_t& last = last_[static_cast<size_t>(channel)];
  const int8_t now = attributes.is_backlog ? 1 : 0;
  if (last == now) return std::nullopt;
  if (last < 0) ++reported_;
  if (last == 1) --backlog_;
  if (now == 1) ++backlog_;
  last = now;
  return combine();
}

std::optional<RecordAttributes> RecordAttributesCombiner::endOfInput(int channel) {
  const bool reported = any_reported_;
  std::optional<RecordAttributes> combined = inputRecordAttributes(channel, RecordAttributes{false});
  any_reported_ = reported;
  // An input none of whose channels ever reported stays silent to its end: jobs without backlog see none.
  return any_reported_ ? combined : std::nullopt;
}

std::optional<RecordAttributes> RecordAttributesCombiner::combine() {
  bool backlog;
  if (backlog_ > 0) backlog = true;
  else if (reported_ == numChannels()) backlog = false;
  else return std::nullopt;  // undetermined: a channel has not reported and none is backlog
  if (emitted_ && *emitted_ == backlog) return std::nullopt;
  emitted_ = backlog;
  return RecordAttributes{backlog};
}

}  // namespace sluice::runtime

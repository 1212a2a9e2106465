#pragma once
/// InputGate (Flink's SingleInputGate) and ResultPartition. Every gate channel reads network buffers through
/// an InputChannel (input_channel.h: LocalInputChannel in the same TaskManager, RemoteInputChannel over TCP;
/// blocking_subpartition.h: SpilledInputChannel for a blocking (BATCH) result). Backpressure is the producer
/// waiting for a buffer of its partition's pool; cancellation wakes the consumer.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <exception>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/network/buffer_debloater.h"
#include "runtime/network/buffer_pool.h"
#include "runtime/network/input_channel.h"
#include "runtime/network/pipelined_subpartition.h"
#include "runtime/stream_element.h"

namespace sluice::runtime {

class BlockingSubpartition;

/// The input side of one consuming subtask: `numChannels()` channels, one per producing subtask of every
/// input edge, numbered by the cluster. One mutex guards all channels so the consumer drains everything
/// queued with one lock.
///
/// Threading: `push` from producer threads; `pollAll` only from the consumer's task thread; `wakeup` and
/// `cancel` from any thread.
class InputGate {
 public:
  /// An element and the channel it arrived on.
  using Entry = InputEntry;
  enum class PollResult { kData, kTimeout, kWakeup, kCancelled };

  /// `num_channels` channels, each to be given its InputChannel with attachChannel.
  explicit InputGate(int num_channels);
  ~InputGate();

  /// Makes `channel` read network buffers through `input` (local, remote or a spill file). Call before the
  /// consumer starts; every channel needs one.
  void attachChannel(int channel, std::shared_ptr<InputChannel> input);
  /// The network input channels (index = position in attach order), e.g. to announce a debloated buffer
  /// size.
  const std::vector<std::shared_ptr<InputChannel>>& inputChannels() const { return channels_; }
  /// Consumer thread: the gate's throughput measurement (bytes read from buffers, idle time excluded).
  network::ThroughputCalculator& throughput() { return throughput_; }
  /// Any thread: bytes read from network buffers (the `numBytesIn` metric).
  int64_t bytesIn() const { return bytes_in_.load(std::memory_order_relaxed); }
  /// Any thread: data buffers queued for this gate over all network input channels.
  int32_t queuedBuffers() const;

  int numChannels() const { return num_channels_; }

  /// Moves every element its channels can give now, in order per channel, into `out` (which must be empty).
  /// Blocks until a channel has buffers, `deadline` passes (none: no limit), `wakeup()` is called, or the
  /// gate is cancelled. Throws a channel's failure (InputError on corrupt bytes, a remote peer's error).
  PollResult pollAll(std::deque<Entry>& out,
                     std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

  /// Consumer thread: stops (`blocked` true) or resumes reading gate channel `channel` (Flink's
  /// CheckpointedInputGate blocking a channel that delivered the barrier of an aligned checkpoint). A
  /// blocked channel's buffers stay queued, so its producer runs out of credit (backpressure).
  void setChannelBlocked(int channel, bool blocked);
  /// Makes a blocked (or the next) pollAll return kWakeup, e.g. because a mail arrived.
  void wakeup();
  /// Cancels the gate: pollAll returns kCancelled (producers waiting for buffers are released by the
  /// cluster destroying their pools).
  void cancel();
  bool isCancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  const int num_channels_;
  std::mutex mu_;
  std::condition_variable consumer_cv_;
  bool consumer_waiting_ = false;
  bool wakeup_ = false;
  std::atomic<bool> cancelled_{false};
  bool channel_signal_ = false;  ///< a network input channel has buffers to drain
  std::vector<std::shared_ptr<InputChannel>> channels_;
  std::vector<int> channel_index_;
  std::vector<char> blocked_;  ///< by position in channels_; consumer thread only
  network::SystemRelativeClock clock_;
  network::ThroughputCalculator throughput_{clock_};
  std::atomic<int64_t> bytes_in_{0};
};

/// Where a producing subtask writes: one subpartition per connected consumer subtask, each a channel
/// of that consumer's InputGate (Flink's ResultPartition with its ResultSubpartitions).
struct ResultPartition {
  struct Subpartition {
    InputGate* gate;
    int channel;
    int consumer_subtask;
    /// Set: the element goes through network buffers (read by a local or a remote input channel).
    std::shared_ptr<PipelinedSubpartition> pipelined = nullptr;
    /// Set: a blocking result; the element is spilled to the subpartition's file (BATCH mode).
    std::shared_ptr<BlockingSubpartition> blocking = nullptr;
  };
  std::vector<Subpartition> subpartitions;  ///< ascending consumer subtask
  int consumer_parallelism = 1;
  int consumer_max_parallelism = 128;

  std::shared_ptr<network::LocalBufferPool> pool;  ///< buffers of the pipelined subpartitions (may be null)

  /// Sends `element` to subpartition `i`; blocks on backpressure; throws CancelTaskException.
  void emit(size_t i, StreamElement&& element);
  /// Hands every partially filled buffer to its consumer (the output flusher).
  void flushBuffers();
  /// True when a partially filled buffer waits for a flush.
  bool hasPendingBytes() const;
  /// Any thread: bytes handed to consumers through buffers (the `numBytesOut` metric).
  int64_t bytesOut() const;
  /// Any thread: nanoseconds spent waiting for a free buffer.
  int64_t backPressuredNanos() const;
  /// Whether every pipelined subpartition can take a record without waiting for a buffer (Flink's
  /// ResultPartition#isAvailable); the first one that cannot is charged `waited_ns` of backpressure when
  /// `waited_ns` > 0.
  bool isAvailable(int64_t waited_ns = 0) const;
};

}  // namespace sluice::runtime

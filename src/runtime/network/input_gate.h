#pragma once
/// InputGate and its InputChannels (Flink's SingleInputGate / LocalInputChannel), in-memory for now:
/// each channel is a bounded FIFO of StreamElements from one producing subtask. A full channel blocks its
/// producer (backpressure); cancellation unblocks both sides. This is the seam the buffer-based network
/// stack replaces later.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/stream_element.h"

namespace sluice::runtime {

/// Thrown inside a task when its job is being cancelled (Flink's CancelTaskException). Never a failure.
class CancelTaskException : public std::exception {
 public:
  const char* what() const noexcept override { return "task cancelled"; }
};

/// The input side of one consuming subtask: `numChannels()` channels, one per producing subtask of every
/// input edge, numbered by the cluster. One mutex guards all channels so the consumer drains everything
/// queued with one lock.
///
/// Threading: `push` from producer threads; `pollAll` only from the consumer's task thread; `wakeup` and
/// `cancel` from any thread.
class InputGate {
 public:
  /// An element and the channel it arrived on.
  struct Entry {
    int channel;
    StreamElement element;
  };
  enum class PollResult { kData, kTimeout, kWakeup, kCancelled };

  /// `capacity` >= 1: elements (batches, watermarks, end markers) a channel holds before its producer blocks.
  InputGate(int num_channels, int capacity);

  int numChannels() const { return static_cast<int>(queued_.size()); }

  /// Appends `element` to `channel`, blocking while the channel is full. Throws CancelTaskException when
  /// the gate is (or gets) cancelled.
  void push(int channel, StreamElement&& element);

  /// Moves every queued element, in arrival order, into `out` (which must be empty). Blocks until there
  /// is at least one, `deadline` passes (none: no limit), `wakeup()` is called, or the gate is cancelled.
  PollResult pollAll(std::deque<Entry>& out,
                     std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

  /// Makes a blocked (or the next) pollAll return kWakeup, e.g. because a mail arrived.
  void wakeup();
  /// Cancels the gate: blocked producers throw CancelTaskException, pollAll returns kCancelled.
  void cancel();
  bool isCancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  const int capacity_;
  std::mutex mu_;
  std::condition_variable consumer_cv_;
  std::condition_variable producer_cv_;
  std::deque<Entry> queue_;
  std::vector<int> queued_;  ///< elements queued per channel
  int waiting_producers_ = 0;
  bool consumer_waiting_ = false;
  bool wakeup_ = false;
  std::atomic<bool> cancelled_{false};
};

/// Where a producing subtask writes: one subpartition per connected consumer subtask, each a channel
/// of that consumer's InputGate (Flink's ResultPartition with its ResultSubpartitions).
struct ResultPartition {
  struct Subpartition {
    InputGate* gate;
    int channel;
    int consumer_subtask;
  };
  std::vector<Subpartition> subpartitions;  ///< ascending consumer subtask
  int consumer_parallelism = 1;
  int consumer_max_parallelism = 128;

  /// Sends `element` to subpartition `i`; blocks on backpressure; throws CancelTaskException.
  void emit(size_t i, StreamElement&& element) {
    subpartitions[i].gate->push(subpartitions[i].channel, std::move(element));
  }
};

}  // namespace sluice::runtime

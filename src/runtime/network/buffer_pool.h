#pragma once
/// Network buffer pools: `NetworkBufferPool` (one per TaskManager: every memory segment of the network
/// stack, Flink's `NetworkBufferPool`) and `LocalBufferPool` (one per result partition or input gate, with a
/// guaranteed minimum and a maximum number of buffers, Flink's `LocalBufferPool`).
///
/// Threading: both pools are thread-safe. Callbacks (`BufferListener`) run on the thread that released
/// the buffer, never while a pool lock is held. Lock order: LocalBufferPool before NetworkBufferPool.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/network/buffer.h"

namespace sluice::runtime::network {

class LocalBufferPool;

/// Told when a buffer becomes available after a request found none (Flink's `BufferListener`).
class BufferListener {
 public:
  virtual ~BufferListener() = default;
  /// Hands `buffer` to the listener. Returns true when the listener wants further buffers (it stays
  /// registered), false to unregister. A listener that does not need the buffer lets it go (recycled).
  virtual bool notifyBufferAvailable(Buffer buffer) = 0;
};

/// All memory segments of one TaskManager's network stack, allocated up front (Flink's
/// `NetworkBufferPool`). Hands out exclusive segments (input channels) and creates LocalBufferPools whose
/// minimum is reserved at creation, so a job that does not fit fails at setup with a clear error instead
/// of deadlocking later.
class NetworkBufferPool : public BufferRecycler {
 public:
  /// Allocates `num_segments` segments of `segment_size` bytes each. Throws ConfigError naming
  /// taskmanager.memory.network.* when `num_segments` < 1.
  NetworkBufferPool(int32_t num_segments, int32_t segment_size);
  ~NetworkBufferPool() override;

  int32_t segmentSize() const { return segment_size_; }
  int32_t totalSegments() const { return total_; }
  /// Segments free in the pool right now (not held by anyone).
  int32_t availableSegments() const;
  /// Segments promised to exclusive requests and LocalBufferPool minimums.
  int32_t committedSegments() const;

  /// Takes `n` segments for exclusive use by `owner` (a channel), all or nothing (Flink's
  /// `requestPooledMemorySegmentsBlocking` without the wait). Throws ConfigError "Insufficient number of
  /// network buffers: ..." naming the options to raise when they would eat into reserved minimums.
  std::vector<MemorySegment*> requestExclusiveSegments(int32_t n, const std::string& owner);
  /// Gives back segments from requestExclusiveSegments.
  void recycleExclusiveSegments(const std::vector<MemorySegment*>& segments);

  /// Creates a pool with `min_buffers` reserved and up to `max_buffers` (Flink's `createBufferPool`).
  /// Throws ConfigError naming the options to raise when the minimum cannot be reserved. The pool must be
  /// destroyed (all its buffers returned) before this NetworkBufferPool.
  std::shared_ptr<LocalBufferPool> createBufferPool(int32_t min_buffers, int32_t max_buffers, const std::string& owner);

  /// Takes back any segment this pool handed out; wakes one LocalBufferPool waiting for memory.
  void recycle(MemorySegment* segment) override;

 private:
  friend class LocalBufferPool;
  /// For a LocalBufferPool holding `held` segments with minimum `min`: a segment, or nullptr when the
  /// pool may not take one now (it then waits, registered through `waitFor`).
  MemorySegment* requestForPool(int32_t held, int32_t min);
  /// A LocalBufferPool that held `held_before` segments (minimum `min`) gives one back.
  void returnFromPool(MemorySegment* segment, int32_t held_before, int32_t min);
  void waitFor(const std::weak_ptr<LocalBufferPool>& pool);
  void releasePool(int32_t min, int32_t held);
  [[noreturn]] void insufficient(int32_t required, const std::string& owner) const;

  const int32_t total_;
  const int32_t segment_size_;
  std::vector<std::unique_ptr<MemorySegment>> segments_;
  mutable std::mutex mu_;
  std::vector<MemorySegment*> free_;
  int32_t committed_ = 0;             // exclusive segments out + sum of pool minimums
  int32_t unfulfilled_reserved_ = 0;  // sum over pools of max(0, min - held): free segments kept for them
  std::deque<std::weak_ptr<LocalBufferPool>> waiters_;
};

/// Buffers of one result partition or input gate (Flink's `LocalBufferPool`): at least `min` segments are
/// guaranteed by the NetworkBufferPool, at most `max` are held. Floating buffers of an input gate come from
/// here. A request that finds no buffer either returns an empty Buffer (`requestBuffer`), registers a
/// BufferListener called once one is free (`requestBufferOrListen`), or blocks on a condition variable
/// (`requestBufferBlocking`) — never a busy wait.
///
/// A result partition's pool may also cap the buffers of each subpartition
/// (`setMaxBuffersPerChannel`, Flink's `maxBuffersPerChannel` from
/// `taskmanager.network.memory.max-buffers-per-channel`): a buffer requested for subpartition i counts
/// against i until it is recycled (the consumer read it), and a request for a subpartition at its cap finds
/// no buffer (blocks) even when the pool has free ones, so one slow consumer cannot take the whole pool.
class LocalBufferPool : public BufferRecycler, public std::enable_shared_from_this<LocalBufferPool> {
 public:
  /// Use NetworkBufferPool::createBufferPool.
  LocalBufferPool(NetworkBufferPool& global, int32_t min_buffers, int32_t max_buffers, std::string owner);
  ~LocalBufferPool() override;

  int32_t minBuffers() const { return min_; }
  int32_t maxBuffers() const { return max_; }
  /// Segments taken from the NetworkBufferPool (in use or idle here).
  int32_t requestedSegments() const;
  /// Buffers handed out and not yet recycled (Flink's `bestEffortGetNumOfUsedBuffers`).
  int32_t buffersInUse() const;
  /// The most buffers handed out at once so far (never above maxBuffers(); shows memory stayed bounded).
  int32_t peakBuffersInUse() const;
  /// True while a thread waits in requestBufferBlocking (the writer is back pressured now).
  bool hasWaitingRequester() const;
  /// Whether a request for `subpartition` (-1: any) would find a buffer now (Flink's
  /// LocalBufferPool#isAvailable): the subpartition is below its cap and a segment is free here or may still
  /// be taken from the NetworkBufferPool. True once destroyed (the request then fails at once).
  bool isAvailable(int32_t subpartition = -1) const;

  /// A buffer of the full segment size, or an empty Buffer when none can be had now.
  Buffer requestBuffer();
  /// A buffer, or an empty Buffer after registering `listener` to be handed one when available.
  Buffer requestBufferOrListen(BufferListener* listener);
  /// Unregisters `listener` (no call after this returns).
  void removeListener(BufferListener* listener);
  /// Waits until a buffer is available. Throws InternalError when the pool is destroyed meanwhile.
  Buffer requestBufferBlocking();
  /// Wakes blocked requesters with an error (task cancellation); later requests return empty buffers.
  void destroy();

  /// Caps each of `num_subpartitions` subpartitions at `max_per_channel` (>= 1) buffers handed out and not
  /// yet recycled. Call once, before any request for a subpartition.
  void setMaxBuffersPerChannel(int32_t num_subpartitions, int32_t max_per_channel);
  /// A buffer for `subpartition`, or an empty Buffer when the pool has none or the subpartition is at its
  /// cap. Needs setMaxBuffersPerChannel.
  Buffer requestBuffer(int32_t subpartition);
  /// Waits until a buffer is available for `subpartition` (the pool has one and the subpartition is below
  /// its cap). Throws InternalError when the pool is destroyed meanwhile.
  Buffer requestBufferBlocking(int32_t subpartition);
  /// Buffers of `subpartition` handed out and not yet recycled.
  int32_t subpartitionBuffers(int32_t subpartition) const;

  void recycle(MemorySegment* segment) override;

 private:
  friend class NetworkBufferPool;
  // Returns buffers of one subpartition (Flink's SubpartitionBufferRecycler).
  class SubpartitionRecycler final : public BufferRecycler {
   public:
    SubpartitionRecycler(LocalBufferPool* pool, int32_t index) : pool_(pool), index_(index) {}
    void recycle(MemorySegment* segment) override;

   private:
    LocalBufferPool* pool_;
    int32_t index_;
  };

  MemorySegment* takeLocked();
  void countTakenLocked();  // one more buffer handed out
  void recycleLocked(MemorySegment* segment, std::unique_lock<std::mutex>& lock);
  void onGlobalSegmentAvailable();

  NetworkBufferPool& global_;
  const int32_t min_;
  const int32_t max_;
  const std::string owner_;
  mutable std::mutex mu_;
  std::condition_variable available_cv_;
  std::deque<MemorySegment*> available_;
  int32_t requested_ = 0;  // segments taken from the global pool
  int32_t in_use_ = 0;
  int32_t peak_in_use_ = 0;
  int32_t blocked_ = 0;  // threads in requestBufferBlocking
  bool waiting_on_global_ = false;
  bool destroyed_ = false;
  std::deque<BufferListener*> listeners_;
  int32_t max_per_channel_ = 0;  // 0: no per-subpartition cap
  std::vector<int32_t> subpartition_buffers_;
  std::vector<std::unique_ptr<SubpartitionRecycler>> subpartition_recyclers_;
};

}  // namespace sluice::runtime::network

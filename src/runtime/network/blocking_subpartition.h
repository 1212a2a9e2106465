#pragma once
/// Blocking results (BATCH mode, Flink's `BoundedBlockingSubpartition` in FILE mode): every subpartition
/// of a blocking result partition is written, as the same serialized buffers a pipelined channel carries,
/// to a spill file of its own; its consumer, deployed once the producer finished, reads the file back
/// through a few buffers of its own (`SpilledInputChannel`). Memory stays bounded however large the
/// result: a producer holds one partially filled buffer per subpartition, a reader its exclusive buffers.
///
/// Spill files live in a per-job directory under `io.tmp.dirs` (`SpillDirectory`, Flink's
/// `FileChannelManager` directories), removed with everything in it when the job ends in any state.
///
/// File layout, one entry per buffer: u8 kind (0 = data, 1 = event), u32 size (little endian), the bytes.
///
/// Threading: `BlockingSubpartition::write`/`flush` on the producer's task thread; the channel's `drain` on
/// the consumer's task thread; `isFinished`, listeners and metrics from any thread.

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/network/buffer_pool.h"
#include "runtime/network/input_channel.h"
#include "runtime/network/record_serializer.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/stream_element.h"

namespace sluice::runtime {

/// A job's directory of spill files: created on construction under one of `base_dirs` (Flink's
/// `io.tmp.dirs`; empty: the system temp directory), removed with its files on destruction or `remove()`.
class SpillDirectory {
 public:
  /// Creates `<base>/sluice-<job_id>-<random>`. Throws ConfigError naming io.tmp.dirs when it cannot.
  SpillDirectory(const std::vector<std::string>& base_dirs, const std::string& job_id);
  ~SpillDirectory();
  SpillDirectory(const SpillDirectory&) = delete;
  SpillDirectory& operator=(const SpillDirectory&) = delete;
  const std::string& path() const { return path_; }
  /// Removes the directory and every file in it (idempotent, never throws).
  void remove();

 private:
  std::string path_;
  std::mutex mu_;
  bool removed_ = false;
};

/// The producer half of one blocking channel: writes the subpartition's buffers to its spill file.
class BlockingSubpartition {
 public:
  /// `pool`: the partition's buffers (one per subpartition plus one suffice: a full buffer is written and
  /// recycled at once). `path`: the spill file (created now). `objects`: the edge's object batch
  /// serializer (nullptr for rows). Throws InputError naming the path when the file cannot be created.
  BlockingSubpartition(std::shared_ptr<network::LocalBufferPool> pool, std::string path,
                       std::shared_ptr<const ObjectBatchSerializer> objects);
  ~BlockingSubpartition();
  BlockingSubpartition(const BlockingSubpartition&) = delete;
  BlockingSubpartition& operator=(const BlockingSubpartition&) = delete;

  /// Producer: serializes `element` into the file; the end of the partition completes and closes it.
  /// Throws InputError naming the file when writing fails (e.g. disk full), CancelTaskException when the
  /// pool is destroyed (cancellation).
  void write(StreamElement&& element);

  /// True once the end of the partition was written (the consumer may read).
  bool isFinished() const { return finished_.load(std::memory_order_acquire); }
  /// Calls `listener` (without locks) when the subpartition finishes; at once when it already has.
  void setFinishedListener(std::function<void()> listener);
  const std::string& path() const { return path_; }
  const std::shared_ptr<const ObjectBatchSerializer>& objectSerializer() const { return objects_; }
  /// Any thread: bytes of the buffers written.
  int64_t bytesOut() const { return bytes_out_.load(std::memory_order_relaxed); }

 private:
  network::Buffer requestBuffer();
  void spill(network::Buffer buffer);

  std::shared_ptr<network::LocalBufferPool> pool_;  // first: outlives every buffer below
  const std::string path_;
  std::shared_ptr<const ObjectBatchSerializer> objects_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<network::SpanningRecordSerializer> serializer_;
  network::StreamElementSerializer elements_;
  std::atomic<int64_t> bytes_out_{0};
  std::atomic<bool> finished_{false};
  std::mutex listener_mu_;
  std::function<void()> finished_listener_;
};

/// Reads a finished BlockingSubpartition's spill file through `buffers` exclusive segments (Flink's
/// `BoundedBlockingSubpartitionReader` behind a local input channel): a buffer is read from the file only
/// when one of the segments is free again.
class SpilledInputChannel final : public InputChannel, public network::BufferRecycler {
 public:
  /// Takes `buffers` (>= 1) exclusive segments of `global` (ConfigError naming the network memory options
  /// when they are short). `global` must outlive the channel.
  SpilledInputChannel(std::shared_ptr<BlockingSubpartition> subpartition, network::NetworkBufferPool& global,
                      int32_t buffers);
  ~SpilledInputChannel() override;

  void setAvailabilityListener(std::function<void()> listener) override;
  bool hasAvailable() const override;
  /// Blocking results are read after they are complete: buffer sizes are fixed, nothing to announce.
  void announceBufferSize(int32_t bytes) override { (void)bytes; }
  int32_t queuedBuffers() const override { return 0; }
  std::string describe() const override { return "the spill file '" + subpartition_->path() + "'"; }
  void recycle(network::MemorySegment* segment) override;

 protected:
  network::Buffer nextBuffer() override;

 private:
  std::shared_ptr<BlockingSubpartition> subpartition_;
  network::NetworkBufferPool& global_;
  std::vector<network::MemorySegment*> segments_;  // all exclusive segments, returned on destruction
  mutable std::mutex mu_;
  std::vector<network::MemorySegment*> free_;
  std::function<void()> listener_;
  std::FILE* file_ = nullptr;  // consumer thread only
  int64_t offset_ = 0;         // consumer thread only
  std::atomic<bool> eof_{false};
};

}  // namespace sluice::runtime

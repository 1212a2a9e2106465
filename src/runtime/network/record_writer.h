#pragma once
/// RecordWriter: sends a producing subtask's batches to the subpartitions of one ResultPartition, chosen
/// by the edge's ship strategy (Flink's RecordWriter + ChannelSelector / StreamPartitioner), with output
/// batching (Flink's buffer timeout): small batches are coalesced up to `sluice.batch.size` rows per
/// target and flushed when full, on a watermark, at end of input, or when the task's flush deadline
/// (`execution.buffer-timeout`) passes.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/transformation.h"
#include "runtime/network/input_gate.h"
#include "runtime/object_batch.h"
#include "types/row_batch.h"

namespace sluice::runtime {

/// Hash of the key columns of row `row`, the code from which HASH exchanges and keyed state compute key
/// groups: `assignToKeyGroup(hashKey(...), maxParallelism)` (common/hash.h). NULL hashes to a fixed value;
/// strings hash their bytes; integral/decimal/timestamp values hash their int64 value; doubles their value
/// (-0.0 == 0.0, all NaNs equal). Column order matters. Pure, any thread.
uint64_t hashKey(const types::RowBatch& batch, size_t row, const std::vector<int>& key_columns);

/// hashKey of every row of `batch`, into `out` (resized to numRows()); column-at-a-time.
void hashKeys(const types::RowBatch& batch, const std::vector<int>& key_columns, std::vector<uint64_t>& out);

/// Appends rows `rows[0..n)` of `src` to `dst` column-at-a-time (dst gets src's column types when it
/// has no columns yet).
void appendRows(types::RowBatch& dst, const types::RowBatch& src, const uint32_t* rows, size_t n);
/// Appends all rows of `src` to `dst` (same column types).
void appendBatch(types::RowBatch& dst, const types::RowBatch& src);

/// Writes one out edge of one subtask. Task thread only, except `recordsOut()`.
///
/// DataStream records (emitObjects) follow Flink's per-record channel selection: REBALANCE/RESCALE go
/// round-robin record by record, SHUFFLE picks a random channel per record, HASH uses the edge's
/// ObjectPartitioner for key hashes (then key group and subtask as for rows), CUSTOM asks it for the
/// channel of every record; FORWARD/GLOBAL/BROADCAST work as for rows. Object batches are coalesced per
/// target like row batches.
class RecordWriter {
 public:
  /// `producer_index`: this subtask (seeds round-robin and shuffle). `batch_size` rows: coalescing
  /// target. `coalesce` false (buffer timeout 0): every batch is sent at once.
  /// Throws UserError for the CUSTOM strategy without an ObjectPartitioner (not supported for SQL rows).
  RecordWriter(ResultPartition partition, graph::PartitionerSpec partitioner, int producer_index, size_t batch_size,
               bool coalesce);

  /// Routes a batch (empty batches are dropped). May block on backpressure; throws CancelTaskException.
  void emit(types::RowBatch&& batch);
  /// Routes a batch of DataStream records (empty batches are dropped). May block on backpressure; throws
  /// CancelTaskException, UserError from a custom partitioner.
  void emitObjects(ObjectBatchPtr&& batch);
  /// Flushes, then sends the watermark to every subpartition.
  void broadcastWatermark(Watermark mark);
  /// Flushes, then sends the watermark status to every subpartition.
  void broadcastWatermarkStatus(WatermarkStatus status);
  /// Flushes, then sends the record attributes to every subpartition (FLIP-327): the records after them
  /// carry the new backlog status.
  void broadcastRecordAttributes(RecordAttributes attributes);
  /// Flushes, then sends the checkpoint barrier to every subpartition (Flink's broadcastEvent): records
  /// emitted before it belong to the checkpoint, records after it do not.
  void broadcastCheckpointBarrier(const CheckpointBarrier& barrier);
  /// Sends an unaligned checkpoint barrier (FLIP-76) to every subpartition ahead of its queued buffers
  /// (PipelinedSubpartition::writePriorityBarrier; a blocking subpartition gets it in order). Never waits
  /// for a buffer. `overtaken[i]` (resized to the subpartition count) gets the channel state of
  /// subpartition i: the records the barrier overtook, then the coalesced rows not yet sent, which are
  /// still sent after it.
  void broadcastUnalignedBarrier(const CheckpointBarrier& barrier, std::vector<std::string>& overtaken);
  /// Restore of an unaligned checkpoint: sends `record` (a RowBatch or object batch) to subpartition
  /// `target` as it is, not through the partitioner (the channel it was in flight on). May block on
  /// backpressure.
  void replayRecord(size_t target, StreamElement&& record);
  /// Consumer subtask of subpartition `target`.
  int consumerOf(size_t target) const { return partition_.subpartitions[target].consumer_subtask; }
  size_t numTargets() const { return num_targets_; }
  /// Sends all coalesced batches.
  void flush();
  /// Flushes, then sends EndOfPartition to every subpartition.
  void endOfPartition();
  /// True when coalesced rows or a partially filled network buffer wait for a flush.
  bool hasPending() const { return pending_rows_ > 0 || partition_.hasPendingBytes(); }
  /// The partition written (metrics; any thread may read its byte and backpressure counters).
  const ResultPartition& partition() const { return partition_; }
  /// Rows handed to emit so far (any thread).
  int64_t recordsOut() const { return records_out_.load(std::memory_order_relaxed); }

 private:
  void sendTo(size_t target, types::RowBatch&& batch);
  void emitTo(size_t target, types::RowBatch&& batch);
  void emitHashed(types::RowBatch&& batch);
  void sendObjectsTo(size_t target, ObjectBatchPtr&& batch);
  void emitObjectsTo(size_t target, ObjectBatchPtr&& batch);
  /// Sends record i of `batch` to channels_[i].
  void emitObjectsSplit(ObjectBatchPtr&& batch);
  void flushObjects();
  void advanceRoundRobin();
  size_t nextShuffle();

  ResultPartition partition_;
  graph::PartitionerSpec partitioner_;
  size_t batch_size_;
  bool coalesce_;
  size_t num_targets_;
  size_t round_robin_ = 0;
  uint64_t rng_state_;
  std::vector<types::RowBatch> pending_;
  size_t pending_rows_ = 0;
  std::vector<uint64_t> hashes_;
  std::vector<std::vector<uint32_t>> rows_per_target_;
  const ObjectPartitioner* object_partitioner_ = nullptr;  ///< owned by partitioner_
  std::vector<ObjectBatchPtr> pending_objects_;
  bool objects_seen_ = false;  ///< keeps the row path from scanning pending_objects_
  std::vector<int> channels_;
  std::atomic<int64_t> records_out_{0};
};

}  // namespace sluice::runtime

// The DataStream-record half of RecordWriter (see record_writer.h).
#include "common/error.h"
#include "common/hash.h"
#include "runtime/network/record_writer.h"

namespace sluice::runtime {

void RecordWriter::sendObjectsTo(size_t target, ObjectBatchPtr&& batch) {
  if (partitioner_.strategy == graph::ShipStrategy::kBroadcast) {
    for (size_t i = 0; i + 1 < num_targets_; ++i) partition_.emit(i, batch->clone());
    partition_.emit(num_targets_ - 1, std::move(batch));
    return;
  }
  partition_.emit(target, std::move(batch));
}

void RecordWriter::emitObjectsTo(size_t target, ObjectBatchPtr&& batch) {
  if (!coalesce_) {
    sendObjectsTo(target, std::move(batch));
    return;
  }
  ObjectBatchPtr& p = pending_objects_[target];
  const size_t n = batch->size();
  if (p && p->size() + n > batch_size_) {
    pending_rows_ -= p->size();
    sendObjectsTo(target, std::move(p));
    p.reset();
  }
  if (!p) {
    if (n >= batch_size_) {
      sendObjectsTo(target, std::move(batch));
    } else {
      p = std::move(batch);
      pending_rows_ += n;
    }
    return;
  }
  p->appendAll(std::move(*batch));
  pending_rows_ += n;
  if (p->size() >= batch_size_) {
    pending_rows_ -= p->size();
    sendObjectsTo(target, std::move(p));
    p.reset();
  }
}

void RecordWriter::emitObjects(ObjectBatchPtr&& batch) {
  const size_t n = batch ? batch->size() : 0;
  if (n == 0) return;
  objects_seen_ = true;
  records_out_.store(records_out_.load(std::memory_order_relaxed) + static_cast<int64_t>(n),
                     std::memory_order_relaxed);
  channels_.resize(n);
  switch (partitioner_.strategy) {
    case graph::ShipStrategy::kForward:
    case graph::ShipStrategy::kGlobal:
    case graph::ShipStrategy::kBroadcast:
      emitObjectsTo(0, std::move(batch));
      return;
    case graph::ShipStrategy::kRebalance:
    case graph::ShipStrategy::kRescale:
      // Flink's RebalancePartitioner / RescalePartitioner: the next channel for every record.
      for (size_t i = 0; i < n; ++i) {
        channels_[i] = static_cast<int>(round_robin_);
        advanceRoundRobin();
      }
      break;
    case graph::ShipStrategy::kShuffle:
      for (size_t i = 0; i < n; ++i) channels_[i] = static_cast<int>(nextShuffle());
      break;
    case graph::ShipStrategy::kHash: {
      SLUICE_CHECK(object_partitioner_ != nullptr, "HASH edge for DataStream records without a key selector");
      // One consumer owns every key group: no key to hash.
      if (num_targets_ == 1) {
        emitObjectsTo(0, std::move(batch));
        return;
      }
      object_partitioner_->keyHashes(*batch, hashes_);
      const int32_t max_p = partition_.consumer_max_parallelism;
      const int32_t p = partition_.consumer_parallelism;
      for (size_t i = 0; i < n; ++i) {
        channels_[i] = operatorIndexForKeyGroup(max_p, p, assignToKeyGroup(hashes_[i], max_p));
      }
      break;
    }
    case graph::ShipStrategy::kCustom: {
      object_partitioner_->selectChannels(*batch, static_cast<int>(num_targets_), channels_);
      for (size_t i = 0; i < n; ++i) {
        if (channels_[i] < 0 || static_cast<size_t>(channels_[i]) >= num_targets_) {
          throw UserError(fmt::format("partitionCustom: the partitioner returned channel {} for {} channels",
                                      channels_[i], num_targets_));
        }
      }
      break;
    }
  }
  emitObjectsSplit(std::move(batch));
}

void RecordWriter::emitObjectsSplit(ObjectBatchPtr&& batch) {
  const size_t n = batch->size();
  for (auto& rows : rows_per_target_) rows.clear();
  for (size_t i = 0; i < n; ++i) rows_per_target_[static_cast<size_t>(channels_[i])].push_back(static_cast<uint32_t>(i));
  for (size_t t = 0; t < num_targets_; ++t) {
    if (rows_per_target_[t].size() == n) {  // the whole batch goes to one subtask: no copy
      emitObjectsTo(t, std::move(batch));
      return;
    }
  }
  for (size_t t = 0; t < num_targets_; ++t) {
    const auto& rows = rows_per_target_[t];
    if (rows.empty()) continue;
    ObjectBatchPtr part = batch->emptyLike();
    part->appendRows(*batch, rows.data(), rows.size());
    emitObjectsTo(t, std::move(part));
  }
}

void RecordWriter::flushObjects() {
  if (!objects_seen_) return;
  for (size_t t = 0; t < num_targets_; ++t) {
    if (!pending_objects_[t]) continue;
    ObjectBatchPtr b = std::move(pending_objects_[t]);
    pending_objects_[t].reset();
    sendObjectsTo(t, std::move(b));
  }
}

}  // namespace sluice::runtime

#include "runtime/network/record_writer.h"

#include <cmath>
#include <cstring>

#include "common/error.h"
#include "common/hash.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/serialization/key_hash.h"

namespace sluice::runtime {

namespace {

constexpr uint64_t kKeySeed = kKeyHashSeed;
constexpr uint64_t kNullHash = kNullKeyHash;

inline uint64_t doubleHash(double d) {
  if (d == 0.0) d = 0.0;  // -0.0 and 0.0 are the same key
  if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return mix64(bits);
}

inline uint64_t valueHash(const types::Column& c, size_t row) {
  if (c.isNull(row)) return kNullHash;
  if (c.type().isString()) return hashBytes(c.getString(row));
  if (c.type().isApproximate()) return doubleHash(c.getDouble(row));
  return mix64(static_cast<uint64_t>(c.getLong(row)));
}

}  // namespace

uint64_t hashKey(const types::RowBatch& batch, size_t row, const std::vector<int>& key_columns) {
  uint64_t h = kKeySeed;
  for (int k : key_columns) h = hashCombine(h, valueHash(batch.column(static_cast<size_t>(k)), row));
  return h;
}

void hashKeys(const types::RowBatch& batch, const std::vector<int>& key_columns, std::vector<uint64_t>& out) {
  const size_t n = batch.numRows();
  out.assign(n, kKeySeed);
  for (int k : key_columns) {
    const types::Column& c = batch.column(static_cast<size_t>(k));
    const uint8_t* valid = c.validity().data();
    if (c.type().isString()) {
      for (size_t r = 0; r < n; ++r) out[r] = hashCombine(out[r], valid[r] ? hashBytes(c.getString(r)) : kNullHash);
    } else if (c.type().isApproximate()) {
      const double* v = c.doubles().data();
      for (size_t r = 0; r < n; ++r) out[r] = hashCombine(out[r], valid[r] ? doubleHash(v[r]) : kNullHash);
    } else {
      const int64_t* v = c.longs().data();
      for (size_t r = 0; r < n; ++r) {
        out[r] = hashCombine(out[r], valid[r] ? mix64(static_cast<uint64_t>(v[r])) : kNullHash);
      }
    }
  }
}

void appendRows(types::RowBatch& dst, const types::RowBatch& src, const uint32_t* rows, size_t n) {
  if (dst.numColumns() == 0 && src.numColumns() > 0) {
    dst.columns().reserve(src.numColumns());
    for (const auto& c : src.columns()) dst.columns().emplace_back(c.type());
  }
  SLUICE_CHECK(dst.numColumns() == src.numColumns(), "appending a batch of {} columns to one of {}",
               src.numColumns(), dst.numColumns());
  for (size_t ci = 0; ci < src.numColumns(); ++ci) {
    const types::Column& s = src.column(ci);
    types::Column& d = dst.column(ci);
    auto& valid = d.validity();
    const size_t base = valid.size();
    valid.resize(base + n);
    for (size_t i = 0; i < n; ++i) valid[base + i] = s.validity()[rows[i]];
    if (s.type().isString()) {
      auto& refs = d.strings();
      auto& arena = d.arena();
      refs.reserve(refs.size() + n);
      for (size_t i = 0; i < n; ++i) {
        const types::StringRef r = s.strings()[rows[i]];
        refs.push_back({static_cast<uint32_t>(arena.size()), r.length});
        arena.append(s.arena().data() + r.offset, r.length);
      }
    } else if (s.type().isApproximate()) {
      auto& v = d.doubles();
      v.resize(base + n);
      for (size_t i = 0; i < n; ++i) v[base + i] = s.doubles()[rows[i]];
    } else {
      auto& v = d.longs();
      v.resize(base + n);
      for (size_t i = 0; i < n; ++i) v[base + i] = s.longs()[rows[i]];
    }
  }
  auto& kinds = dst.kinds();
  const size_t base = kinds.size();
  kinds.resize(base + n);
  for (size_t i = 0; i < n; ++i) kinds[base + i] = src.kinds()[rows[i]];
}

void appendBatch(types::RowBatch& dst, const types::RowBatch& src) {
  if (dst.numColumns() == 0 && src.numColumns() > 0) {
    for (const auto& c : src.columns()) dst.columns().emplace_back(c.type());
  }
  SLUICE_CHECK(dst.numColumns() == src.numColumns(), "appending a batch of {} columns to one of {}",
               src.numColumns(), dst.numColumns());
  for (size_t ci = 0; ci < src.numColumns(); ++ci) {
    const types::Column& s = src.column(ci);
    types::Column& d = dst.column(ci);
    d.validity().insert(d.validity().end(), s.validity().begin(), s.validity().end());
    if (s.type().isString()) {
      const uint32_t shift = static_cast<uint32_t>(d.arena().size());
      d.arena().append(s.arena());
      auto& refs = d.strings();
      refs.reserve(refs.size() + s.strings().size());
      for (const types::StringRef r : s.strings()) refs.push_back({r.offset + shift, r.length});
    } else if (s.type().isApproximate()) {
      d.doubles().insert(d.doubles().end(), s.doubles().begin(), s.doubles().end());
    } else {
      d.longs().insert(d.longs().end(), s.longs().begin(), s.longs().end());
    }
  }
  dst.kinds().insert(dst.kinds().end(), src.kinds().begin(), src.kinds().end());
}

RecordWriter::RecordWriter(ResultPartition partition, graph::PartitionerSpec partitioner, int producer_index,
                           size_t batch_size, bool coalesce)
    : partition_(std::move(partition)),
      partitioner_(std::move(partitioner)),
      batch_size_(batch_size == 0 ? 1 : batch_size),
      coalesce_(coalesce),
      num_targets_(partition_.subpartitions.size()),
      rng_state_(mix64(static_cast<uint64_t>(producer_index) + 1)) {
  SLUICE_CHECK(num_targets_ > 0, "a result partition without subpartitions");
  object_partitioner_ = dynamic_cast<const ObjectPartitioner*>(partitioner_.record_partitioner.get());
  if (partitioner_.strategy == graph::ShipStrategy::kCustom && object_partitioner_ == nullptr) {
    throw UserError("The CUSTOM partitioner is supported only for DataStream records (partitionCustom)");
  }
  if (partitioner_.strategy == graph::ShipStrategy::kHash) {
    SLUICE_CHECK(static_cast<int>(num_targets_) == partition_.consumer_parallelism,
                 "HASH edge with {} subpartitions for {} consumers", num_targets_, partition_.consumer_parallelism);
  }
  // Flink starts round-robin at a random channel; the subtask index spreads producers deterministically.
  round_robin_ = static_cast<size_t>(producer_index) % num_targets_;
  pending_.resize(num_targets_);
  pending_objects_.resize(num_targets_);
  rows_per_target_.resize(num_targets_);
}

void RecordWriter::sendTo(size_t target, types::RowBatch&& batch) {
  if (partitioner_.strategy == graph::ShipStrategy::kBroadcast) {
    for (size_t i = 0; i + 1 < num_targets_; ++i) partition_.emit(i, types::RowBatch(batch));
    partition_.emit(num_targets_ - 1, std::move(batch));
  } else {
    partition_.emit(target, std::move(batch));
  }
  // Buffer timeout 0: every record is flushed at once (Flink's flushAlways).
  if (!coalesce_) partition_.flushBuffers();
}

void RecordWriter::emitTo(size_t target, types::RowBatch&& batch) {
  if (!coalesce_) {
    sendTo(target, std::move(batch));
    return;
  }
  types::RowBatch& p = pending_[target];
  const size_t n = batch.numRows();
  if (!p.empty() && p.numRows() + n > batch_size_) {
    pending_rows_ -= p.numRows();
    sendTo(target, std::move(p));
    p = types::RowBatch();
  }
  if (p.empty()) {
    if (n >= batch_size_) {
      sendTo(target, std::move(batch));
    } else {
      p = std::move(batch);
      pending_rows_ += n;
    }
    return;
  }
  appendBatch(p, batch);
  pending_rows_ += n;
  if (p.numRows() >= batch_size_) {
    pending_rows_ -= p.numRows();
    sendTo(target, std::move(p));
    p = types::RowBatch();
  }
}

void RecordWriter::advanceRoundRobin() {
  if (++round_robin_ == num_targets_) round_robin_ = 0;
}

size_t RecordWriter::nextShuffle() {
  rng_state_ = mix64(rng_state_ + 0x9e3779b97f4a7c15ull);
  return static_cast<size_t>(rng_state_ % num_targets_);
}

void RecordWriter::emit(types::RowBatch&& batch) {
  const size_t n = batch.numRows();
  if (n == 0) return;
  records_out_.store(records_out_.load(std::memory_order_relaxed) + static_cast<int64_t>(n),
                     std::memory_order_relaxed);
  switch (partitioner_.strategy) {
    case graph::ShipStrategy::kForward:
    case graph::ShipStrategy::kGlobal:
    case graph::ShipStrategy::kBroadcast:
      emitTo(0, std::move(batch));
      return;
    case graph::ShipStrategy::kRebalance:
    case graph::ShipStrategy::kRescale: {
      // Whole batches round-robin; a target keeps receiving until its coalesced batch has been sent.
      const size_t t = round_robin_;
      emitTo(t, std::move(batch));
      if (pending_[t].empty()) advanceRoundRobin();
      return;
    }
    case graph::ShipStrategy::kShuffle: {
      const size_t t = round_robin_;
      emitTo(t, std::move(batch));
      if (pending_[t].empty()) round_robin_ = nextShuffle();
      return;
    }
    case graph::ShipStrategy::kHash:
      emitHashed(std::move(batch));
      return;
    case graph::ShipStrategy::kCustom:
      break;
  }
  SLUICE_CHECK(false, "unsupported ship strategy {}", graph::shipStrategyName(partitioner_.strategy));
}

void RecordWriter::emitHashed(types::RowBatch&& batch) {
  const size_t n = batch.numRows();
  hashKeys(batch, partitioner_.key_columns, hashes_);
  const int32_t max_p = partition_.consumer_max_parallelism;
  const int32_t p = partition_.consumer_parallelism;
  for (auto& rows : rows_per_target_) rows.clear();
  for (size_t r = 0; r < n; ++r) {
    const int32_t kg = assignToKeyGroup(hashes_[r], max_p);
    rows_per_target_[static_cast<size_t>(operatorIndexForKeyGroup(max_p, p, kg))].push_back(static_cast<uint32_t>(r));
  }
  for (size_t t = 0; t < num_targets_; ++t) {
    if (rows_per_target_[t].size() == n) {  // the whole batch goes to one subtask: no copy
      emitTo(t, std::move(batch));
      return;
    }
  }
  for (size_t t = 0; t < num_targets_; ++t) {
    const auto& rows = rows_per_target_[t];
    if (rows.empty()) continue;
    if (!coalesce_) {
      types::RowBatch out;
      appendRows(out, batch, rows.data(), rows.size());
      sendTo(t, std::move(out));
      continue;
    }
    types::RowBatch& pend = pending_[t];
    appendRows(pend, batch, rows.data(), rows.size());
    pending_rows_ += rows.size();
    if (pend.numRows() >= batch_size_) {
      pending_rows_ -= pend.numRows();
      sendTo(t, std::move(pend));
      pend = types::RowBatch();
    }
  }
}

void RecordWriter::flush() {
  if (pending_rows_ == 0) {
    partition_.flushBuffers();
    return;
  }
  flushObjects();
  for (size_t t = 0; t < num_targets_; ++t) {
    if (pending_[t].empty()) continue;
    types::RowBatch b = std::move(pending_[t]);
    pending_[t] = types::RowBatch();
    sendTo(t, std::move(b));
  }
  pending_rows_ = 0;
  partition_.flushBuffers();
}

void RecordWriter::broadcastWatermark(Watermark mark) {
  flush();
  for (size_t i = 0; i < num_targets_; ++i) partition_.emit(i, mark);
}

void RecordWriter::broadcastWatermarkStatus(WatermarkStatus status) {
  flush();
  for (size_t i = 0; i < num_targets_; ++i) partition_.emit(i, status);
}

void RecordWriter::broadcastRecordAttributes(RecordAttributes attributes) {
  flush();
  for (size_t i = 0; i < num_targets_; ++i) partition_.emit(i, attributes);
}

void RecordWriter::broadcastCheckpointBarrier(const CheckpointBarrier& barrier) {
  // Everything before the barrier goes first: the coalesced rows belong to this checkpoint's side.
  flush();
  for (size_t i = 0; i < num_targets_; ++i) partition_.emit(i, barrier);
  partition_.flushBuffers();
}

void RecordWriter::broadcastUnalignedBarrier(const CheckpointBarrier& barrier, std::vector<std::string>& overtaken) {
  overtaken.assign(num_targets_, std::string());
  for (size_t i = 0; i < num_targets_; ++i) {
    ResultPartition::Subpartition& sp = partition_.subpartitions[i];
    if (!sp.pipelined) {
      flush();
      partition_.emit(i, barrier);
      continue;
    }
    sp.pipelined->writePriorityBarrier(barrier, overtaken[i]);
    // Coalesced rows are before the barrier too; they stay pending and are sent after it.
    const ObjectBatchSerializer* objects = sp.pipelined->objectSerializer().get();
    if (i < pending_.size() && !pending_[i].empty()) {
      StreamElement rows = std::move(pending_[i]);
      network::appendChannelStateRecord(rows, objects, overtaken[i]);
      pending_[i] = std::move(std::get<types::RowBatch>(rows));
    }
    if (i < pending_objects_.size() && pending_objects_[i] && !pending_objects_[i]->empty()) {
      StreamElement batch = std::move(pending_objects_[i]);
      network::appendChannelStateRecord(batch, objects, overtaken[i]);
      pending_objects_[i] = std::move(std::get<ObjectBatchPtr>(batch));
    }
  }
}

void RecordWriter::replayRecord(size_t target, StreamElement&& record) {
  SLUICE_CHECK(target < num_targets_, "replay to subpartition {} of {}", target, num_targets_);
  partition_.emit(target, std::move(record));
}

void RecordWriter::endOfPartition() {
  flush();
  for (size_t i = 0; i < num_targets_; ++i) partition_.emit(i, EndOfPartition{});
}

}  // namespace sluice::runtime

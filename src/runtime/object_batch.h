#pragma once
/// Batches of DataStream records: C++ objects of any type T (ARCHITECTURE.md "Data"), each with an optional
/// event timestamp. A batch is type-erased behind ObjectBatch so tasks, channels and record writers move it
/// without knowing T; operators that know T cast it back with ObjectBatch::as<T>(). A batch is owned by one
/// thread at a time and moved (never shared) between tasks, like a RowBatch.

#include <cstdint>
#include <limits>
#include <memory>
#include <typeinfo>
#include <utility>
#include <vector>

#include "common/error.h"
#include "graph/transformation.h"

namespace sluice::runtime {

/// Timestamp of a record that has none (Flink's StreamRecord without timestamp, Long.MIN_VALUE).
inline constexpr int64_t kNoTimestamp = std::numeric_limits<int64_t>::min();

template <typename T>
class TypedObjectBatch;

/// A batch of records of one C++ type, with one timestamp per record and an output tag (0: the main output;
/// otherwise the id of the side output the records belong to, see OutputTag).
class ObjectBatch {
 public:
  virtual ~ObjectBatch() = default;

  /// Number of records.
  size_t size() const { return timestamps_.size(); }
  bool empty() const { return timestamps_.empty(); }
  /// Event timestamp (ms) of record `i`, or kNoTimestamp.
  int64_t timestamp(size_t i) const { return timestamps_[i]; }
  std::vector<int64_t>& timestamps() { return timestamps_; }
  const std::vector<int64_t>& timestamps() const { return timestamps_; }
  /// 0 for main-output records, else the side output id.
  int tag() const { return tag_; }
  void setTag(int tag) { tag_ = tag; }

  /// A deep copy (for broadcast and fan-out).
  virtual std::unique_ptr<ObjectBatch> clone() const = 0;
  /// An empty batch of the same record type and tag.
  virtual std::unique_ptr<ObjectBatch> emptyLike() const = 0;
  /// Appends records `rows[0..n)` of `src` (same record type), with their timestamps.
  virtual void appendRows(const ObjectBatch& src, const uint32_t* rows, size_t n) = 0;
  /// Moves every record of `src` (same record type) to the end of this batch.
  virtual void appendAll(ObjectBatch&& src) = 0;
  /// The record type's std::type_info.
  virtual const std::type_info& recordType() const = 0;

  /// This batch as a batch of T. Throws InternalError when the records are not of type T.
  template <typename T>
  TypedObjectBatch<T>& as() {
    SLUICE_CHECK(recordType() == typeid(T), "object batch of {} read as {}", recordType().name(), typeid(T).name());
    return static_cast<TypedObjectBatch<T>&>(*this);
  }
  template <typename T>
  const TypedObjectBatch<T>& as() const {
    SLUICE_CHECK(recordType() == typeid(T), "object batch of {} read as {}", recordType().name(), typeid(T).name());
    return static_cast<const TypedObjectBatch<T>&>(*this);
  }

 protected:
  std::vector<int64_t> timestamps_;
  int tag_ = 0;
};

/// Owning handle: what travels in a StreamElement and through Output::collectObjects.
using ObjectBatchPtr = std::unique_ptr<ObjectBatch>;

/// The concrete batch: `values()[i]` is record i, `timestamp(i)` its timestamp.
template <typename T>
class TypedObjectBatch final : public ObjectBatch {
 public:
  TypedObjectBatch() = default;

  std::vector<T>& values() { return values_; }
  const std::vector<T>& values() const { return values_; }
  const T& value(size_t i) const { return values_[i]; }

  /// Appends one record.
  void add(T value, int64_t timestamp = kNoTimestamp) {
    values_.push_back(std::move(value));
    timestamps_.push_back(timestamp);
  }
  void reserve(size_t n) {
    values_.reserve(n);
    timestamps_.reserve(n);
  }

  std::unique_ptr<ObjectBatch> clone() const override { return std::make_unique<TypedObjectBatch<T>>(*this); }
  std::unique_ptr<ObjectBatch> emptyLike() const override {
    auto b = std::make_unique<TypedObjectBatch<T>>();
    b->tag_ = tag_;
    return b;
  }
  void appendRows(const ObjectBatch& src, const uint32_t* rows, size_t n) override {
    const auto& s = src.as<T>();
    values_.reserve(values_.size() + n);
    timestamps_.reserve(timestamps_.size() + n);
    for (size_t i = 0; i < n; ++i) {
      values_.push_back(s.values_[rows[i]]);
      timestamps_.push_back(s.timestamps_[rows[i]]);
    }
  }
  void appendAll(ObjectBatch&& src) override {
    auto& s = src.as<T>();
    if (values_.empty()) {
      values_ = std::move(s.values_);
      timestamps_ = std::move(s.timestamps_);
      return;
    }
    values_.insert(values_.end(), std::make_move_iterator(s.values_.begin()), std::make_move_iterator(s.values_.end()));
    timestamps_.insert(timestamps_.end(), s.timestamps_.begin(), s.timestamps_.end());
  }
  const std::type_info& recordType() const override { return typeid(T); }

 private:
  std::vector<T> values_;
};

/// A new empty batch of T.
template <typename T>
std::unique_ptr<TypedObjectBatch<T>> makeObjectBatch() {
  return std::make_unique<TypedObjectBatch<T>>();
}

/// Partitions object batches for the HASH and CUSTOM ship strategies (carried by graph::PartitionerSpec).
/// Implementations are immutable and shared by all producer subtasks: every method is const and
/// thread-safe.
class ObjectPartitioner : public graph::RecordPartitioner {
 public:
  /// HASH: the stable key hash (runtime/serialization/key_hash.h) of every record of `batch`, into `out`
  /// (resized to batch.size()). The record writer turns it into a key group and a consumer subtask.
  virtual void keyHashes(const ObjectBatch& batch, std::vector<uint64_t>& out) const = 0;
  /// CUSTOM: the consumer subtask (0 .. num_channels-1) of every record, into `out` (Flink's
  /// Partitioner.partition(key, numPartitions)). Throws UserError when the user's function returns a
  /// channel out of range. Default: InternalError (HASH-only partitioners).
  virtual void selectChannels(const ObjectBatch& batch, int num_channels, std::vector<int>& out) const {
    (void)batch;
    (void)num_channels;
    (void)out;
    SLUICE_CHECK(false, "this partitioner has no custom channel selection");
  }
};

}  // namespace sluice::runtime

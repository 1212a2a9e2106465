#pragma once
/// The KeyedInputSorters (stream_operator.h) of DataStream records and of SQL rows, and the factories of
/// keyed operators that hand them out (StreamOperatorFactory::createKeyedInputSorter). Threading: the task
/// thread only.

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/serialization/key_hash.h"
#include "runtime/serialization/type_serializer.h"
#include "runtime/sort/object_sorter.h"
#include "runtime/sort/row_batch_sorter.h"

namespace sluice::runtime {

/// The sort key of a DataStream record: its key group (2 bytes, big endian) and its key's
/// TypeSerializer<K> bytes, the bytes the keyed state backend scopes state by.
template <typename K>
void keyedSortKey(const K& key, int32_t max_parallelism, std::string& out) {
  out.clear();
  const int32_t group = assignToKeyGroup(keyHash(key), max_parallelism);
  out.push_back(static_cast<char>(group >> 8));
  out.push_back(static_cast<char>(group & 0xff));
  DataOutputView view(out);
  TypeSerializer<K>::serialize(key, view);
}

/// KeyedInputSorter of DataStream records of type T keyed by `KS` (K(const T&)). Numbers as keys take
/// the sorter's fixed-length path.
template <typename T, typename K, typename KS>
class ObjectKeyedInputSorter final : public KeyedInputSorter {
 public:
  ObjectKeyedInputSorter(KS key_selector, sort::SorterOptions options, int32_t max_parallelism)
      : key_selector_(std::move(key_selector)), max_parallelism_(max_parallelism),
        sorter_(withKeyLength(std::move(options))) {}

  void addObjects(const ObjectBatch& batch) override {
    const auto& in = batch.as<T>();
    for (size_t i = 0; i < in.size(); ++i) {
      keyedSortKey<K>(key_selector_(in.value(i)), max_parallelism_, key_);
      sorter_.add(key_, in.value(i), in.timestamp(i));
    }
  }
  void finish() override { sorter_.finish(); }
  bool next(size_t max_records, StreamElement& out, const sort::SortBound* bound = nullptr) override {
    auto batch = makeObjectBatch<T>();
    batch->reserve(max_records);
    if (!sorter_.next(batch->values(), batch->timestamps(), max_records, bound)) return false;
    out = ObjectBatchPtr(std::move(batch));
    return true;
  }
  bool peek(std::string_view& key, int64_t& timestamp) override { return sorter_.peek(key, timestamp); }
  void reset() override { sorter_.reset(); }
  const sort::ExternalSorter& sorter() const override { return sorter_.sorter(); }

 private:
  static sort::SorterOptions withKeyLength(sort::SorterOptions o) {
    if constexpr ((std::is_arithmetic_v<K> || std::is_enum_v<K>) && requires { TypeSerializer<K>::kBuiltIn; }) {
      o.fixed_key_length = static_cast<int32_t>(2 + sizeof(K));
    }
    return o;
  }

  KS key_selector_;
  int32_t max_parallelism_;
  sort::ObjectSorter<T> sorter_;
  std::string key_;
};

/// KeyedInputSorter of SQL rows keyed by columns: (key group of runtime::hashKey over the key columns,
/// the HASH exchange's group, then the key values), RowKinds kept.
class RowKeyedInputSorter final : public KeyedInputSorter {
 public:
  RowKeyedInputSorter(const types::RowType& input_type, std::vector<int> key_columns, sort::SorterOptions options,
                      int32_t max_parallelism);
  void addRows(const types::RowBatch& batch) override;
  void finish() override { sorter_.finish(); }
  bool next(size_t max_records, StreamElement& out, const sort::SortBound* bound = nullptr) override;
  bool peek(std::string_view& key, int64_t& timestamp) override {
    timestamp = kNoTimestamp;
    return sorter_.peek(key);
  }
  void reset() override { sorter_.reset(); }
  const sort::ExternalSorter& sorter() const override { return sorter_.sorter(); }

 private:
  std::vector<int> key_columns_;
  int32_t max_parallelism_;
  sort::RowBatchSorter sorter_;
  std::vector<uint64_t> hashes_;
  std::vector<int32_t> groups_;
};

/// A factory of a keyed one-input SQL operator (its input of `input_type` hash-partitioned on
/// `key_columns`): its input is sorted by those columns in BATCH mode and during backlog. No key
/// columns (one global group) means no sorting.
template <typename Fn>
class KeyedRowOperatorFactory final : public LambdaOperatorFactory<Fn> {
 public:
  KeyedRowOperatorFactory(Fn fn, types::RowType input_type, std::vector<int> key_columns)
      : LambdaOperatorFactory<Fn>(std::move(fn), false), input_type_(std::move(input_type)),
        key_columns_(std::move(key_columns)) {}
  bool sortsKeyedInput() const override { return !key_columns_.empty(); }
  std::unique_ptr<KeyedInputSorter> createKeyedInputSorter(const sort::SorterOptions& options, int32_t max_parallelism,
                                                           int input = 0) const override {
    if (key_columns_.empty() || input != 0) return nullptr;
    return std::make_unique<RowKeyedInputSorter>(input_type_, key_columns_, options, max_parallelism);
  }

 private:
  types::RowType input_type_;
  std::vector<int> key_columns_;
};

/// The base of the factory of a keyed two-input SQL operator (a join): input 1 (`left_type`) hash-
/// partitioned on `left_keys`, input 2 on `right_keys`, key by key of equal types, so equal keys get equal
/// sort keys on both sides. Both inputs are sorted in BATCH mode and during backlog unless `sorted` is
/// false (an operator on processing time) or there are no keys (one global group).
class KeyedTwoInputRowOperatorFactory : public StreamOperatorFactory {
 public:
  KeyedTwoInputRowOperatorFactory(types::RowType left_type, types::RowType right_type, std::vector<int> left_keys,
                                  std::vector<int> right_keys, int num_first_input_edges, bool sorted = true)
      : types_{std::move(left_type), std::move(right_type)}, keys_{std::move(left_keys), std::move(right_keys)},
        first_edges_(num_first_input_edges), sorted_(sorted) {}
  int numFirstInputEdges() const override { return first_edges_; }
  bool sortsKeyedInput() const override { return sorted_ && !keys_[0].empty() && keys_[0].size() == keys_[1].size(); }
  std::unique_ptr<KeyedInputSorter> createKeyedInputSorter(const sort::SorterOptions& options, int32_t max_parallelism,
                                                           int input = 0) const override {
    if (!sortsKeyedInput() || input < 0 || input > 1) return nullptr;
    const auto i = static_cast<size_t>(input);
    return std::make_unique<RowKeyedInputSorter>(types_[i], keys_[i], options, max_parallelism);
  }

 private:
  types::RowType types_[2];
  std::vector<int> keys_[2];
  int first_edges_;
  bool sorted_;
};

/// makeOperatorFactory for a keyed one-input SQL operator (see KeyedRowOperatorFactory).
template <typename Fn>
std::shared_ptr<const StreamOperatorFactory> makeKeyedRowOperatorFactory(Fn fn, types::RowType input_type,
                                                                         std::vector<int> key_columns) {
  return std::make_shared<KeyedRowOperatorFactory<Fn>>(std::move(fn), std::move(input_type), std::move(key_columns));
}

}  // namespace sluice::runtime

#pragma once
/// DataStream records through the external sorter: records of a C++ type T with their timestamps,
/// sorted by key bytes the caller computes (for keyed inputs: the key group, big endian, then the key's
/// TypeSerializer bytes), records of one key in arrival order. T needs a TypeSerializer
/// (runtime/serialization, header-only). Threading: one thread at a time.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/serialization/type_serializer.h"
#include "runtime/sort/external_sorter.h"

namespace sluice::runtime::sort {

/// Sorts records of type T by caller-given key bytes.
template <typename T>
class ObjectSorter {
 public:
  explicit ObjectSorter(SorterOptions options) : sorter_(std::move(options)) {}

  /// Adds `value` (timestamp `timestamp`, ms or kNoTimestamp) under `key`.
  void add(std::string_view key, const T& value, int64_t timestamp) {
    value_.clear();
    value_.append(reinterpret_cast<const char*>(&timestamp), sizeof(timestamp));
    DataOutputView out(value_);
    TypeSerializer<T>::serialize(value, out);
    sorter_.add(key, value_);
  }
  /// No more records (ExternalSorter::finish).
  void finish() { sorter_.finish(); }
  /// Appends up to `max` next records (and their timestamps), with `bound` only those it admits; false
  /// when none were appended.
  bool next(std::vector<T>& values, std::vector<int64_t>& timestamps, size_t max, const SortBound* bound = nullptr) {
    std::string_view key;
    std::string_view bytes;
    size_t n = 0;
    while (n < max && (bound == nullptr ? sorter_.next(key, bytes) : sorter_.peek(key, bytes))) {
      const int64_t ts = timestampOf(bytes);
      if (bound != nullptr) {
        if (!bound->admits(key, ts)) break;
        sorter_.next(key, bytes);
      }
      DataInputView in(bytes.substr(sizeof(ts)));
      values.push_back(TypeSerializer<T>::deserialize(in));
      timestamps.push_back(ts);
      ++n;
    }
    return n > 0;
  }
  /// The key and timestamp of the record next() returns next (the key valid until next() or reset());
  /// false when none is left.
  bool peek(std::string_view& key, int64_t& timestamp) {
    std::string_view bytes;
    if (!sorter_.peek(key, bytes)) return false;
    timestamp = timestampOf(bytes);
    return true;
  }
  /// Drops every record and spill file (ExternalSorter::reset).
  void reset() { sorter_.reset(); }
  /// Removes the spill files (ExternalSorter::close).
  void close() { sorter_.close(); }
  const ExternalSorter& sorter() const { return sorter_; }

 private:
  static int64_t timestampOf(std::string_view bytes) {
    int64_t ts;
    SLUICE_CHECK(bytes.size() >= sizeof(ts), "sorted record of {} bytes", bytes.size());
    std::memcpy(&ts, bytes.data(), sizeof(ts));
    return ts;
  }

  ExternalSorter sorter_;
  std::string value_;
};

}  // namespace sluice::runtime::sort

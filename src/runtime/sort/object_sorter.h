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
  /// Appends up to `max` next records (and their timestamps); false when none were left.
  bool next(std::vector<T>& values, std::vector<int64_t>& timestamps, size_t max) {
    std::string_view key;
    std::string_view bytes;
    size_t n = 0;
    while (n < max && sorter_.next(key, bytes)) {
      int64_t ts;
      SLUICE_CHECK(bytes.size() >= sizeof(ts), "sorted record of {} bytes", bytes.size());
      std::memcpy(&ts, bytes.data(), sizeof(ts));
      DataInputView in(bytes.substr(sizeof(ts)));
      values.push_back(TypeSerializer<T>::deserialize(in));
      timestamps.push_back(ts);
      ++n;
    }
    return n > 0;
  }
  /// Drops every record and spill file (ExternalSorter::reset).
  void reset() { sorter_.reset(); }
  /// Removes the spill files (ExternalSorter::close).
  void close() { sorter_.close(); }
  const ExternalSorter& sorter() const { return sorter_; }

 private:
  ExternalSorter sorter_;
  std::string value_;
};

}  // namespace sluice::runtime::sort

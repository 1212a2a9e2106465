#pragma once
/// Module-internal: the rows of one Top-N partition as the rank operators keep them in keyed state
/// (rank_operator.cc, window_rank.cc), and their snapshot form. Other modules must not include this header.
/// Thread-compatible.

#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/serialization/type_serializer.h"

namespace sluice::table::internal {

/// Sort-key bytes (SortKeyCodec, so the map's byte order is the SQL order) to the rows with that key
/// (KeyCodec of all columns) in arrival order; `count` = rows in all lists.
struct TopNBuffer {
  std::map<std::string, std::vector<std::string>> entries;
  size_t count = 0;
};

}  // namespace sluice::table::internal

namespace sluice::runtime {
/// Snapshot form of a TopNBuffer: varint number of sort keys, per key its bytes and its list of rows.
/// deserialize throws InputError on a sort key without rows or given twice.
template <>
struct TypeSerializer<table::internal::TopNBuffer> {
  static void serialize(const table::internal::TopNBuffer& b, DataOutputView& out) {
    out.writeVarUint(b.entries.size());
    for (const auto& [key, rows] : b.entries) {
      TypeSerializer<std::string>::serialize(key, out);
      TypeSerializer<std::vector<std::string>>::serialize(rows, out);
    }
  }
  static table::internal::TopNBuffer deserialize(DataInputView& in) {
    table::internal::TopNBuffer b;
    const size_t n = in.readLength(2);
    for (size_t i = 0; i < n; ++i) {
      std::string key = TypeSerializer<std::string>::deserialize(in);
      auto rows = TypeSerializer<std::vector<std::string>>::deserialize(in);
      if (rows.empty()) throw InputError("a sort key without rows");
      b.count += rows.size();
      if (!b.entries.emplace(std::move(key), std::move(rows)).second) throw InputError("a sort key given twice");
    }
    return b;
  }
};
}  // namespace sluice::runtime

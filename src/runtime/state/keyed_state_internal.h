#pragma once
/// Pieces shared by the heap and RocksDB keyed state tables of this module: the current key, the heap
/// table's (key, namespace) hash key, and the serializers of a whole list and a whole user map in the
/// canonical snapshot form. Internal to runtime/state (included by keyed_state.h and
/// rocksdb_state_table.h only). Threading: the task thread only.

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "runtime/serialization/type_serializer.h"

namespace sluice::runtime::state {
/// The key the backend's states are scoped to: key bytes and their key group (-1: none set yet).
struct CurrentKey {
  std::string bytes;
  int32_t key_group = -1;
};

namespace internal {

/// (key, namespace) of a heap entry, owned; looked up through StateKeyView without allocating.
struct StateKey {
  std::string key;
  std::string ns;
};
struct StateKeyView {
  std::string_view key;
  std::string_view ns;
};
struct StateKeyHash {
  using is_transparent = void;
  size_t operator()(const StateKeyView& k) const { return hashCombine(hashBytes(k.key), hashBytes(k.ns)); }
  size_t operator()(const StateKey& k) const { return (*this)(StateKeyView{k.key, k.ns}); }
};
struct StateKeyEq {
  using is_transparent = void;
  static StateKeyView view(const StateKey& k) { return StateKeyView{k.key, k.ns}; }
  static StateKeyView view(const StateKeyView& k) { return k; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return view(a).key == view(b).key && view(a).ns == view(b).ns;
  }
};

/// Serializes a std::vector<V> with an element serializer: varint count, then the elements.
template <typename V, typename Ser>
struct ListSerializer {
  static void serialize(const std::vector<V>& v, DataOutputView& out) {
    out.writeVarUint(v.size());
    for (const auto& e : v) Ser::serialize(e, out);
  }
  static std::vector<V> deserialize(DataInputView& in) {
    const size_t n = in.readLength(1);
    std::vector<V> v;
    v.reserve(n);
    for (size_t i = 0; i < n; ++i) v.push_back(Ser::deserialize(in));
    return v;
  }
};

template <typename T, typename = void>
struct IsStdHashable : std::false_type {};
template <typename T>
struct IsStdHashable<T, std::void_t<decltype(std::hash<T>{}(std::declval<const T&>()))>> : std::true_type {};

/// The user map of a MapState: a hash map when std::hash<UK> exists, else an ordered map (UK needs <).
template <typename UK, typename UV>
using UserMap = std::conditional_t<IsStdHashable<UK>::value, std::unordered_map<UK, UV>, std::map<UK, UV>>;

/// Serializes a user map: varint count, then key and value of each entry, entries in bytewise order of
/// their serialized keys. The order makes the form canonical (equal maps give equal bytes whatever the
/// hash map's history) and equal to the RocksDB backend's, whose user keys are sorted in its key space.
template <typename UK, typename UV, typename KeySer, typename ValueSer>
struct UserMapSerializer {
  static void serialize(const UserMap<UK, UV>& m, DataOutputView& out) {
    out.writeVarUint(m.size());
    std::vector<std::pair<std::string, const UV*>> sorted;
    sorted.reserve(m.size());
    for (const auto& [k, v] : m) {
      std::string key_bytes;
      DataOutputView key_out(key_bytes);
      KeySer::serialize(k, key_out);
      sorted.emplace_back(std::move(key_bytes), &v);
    }
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key_bytes, v] : sorted) {
      out.writeBytes(key_bytes.data(), key_bytes.size());
      ValueSer::serialize(*v, out);
    }
  }
  static UserMap<UK, UV> deserialize(DataInputView& in) {
    const size_t n = in.readLength(1);
    UserMap<UK, UV> m;
    for (size_t i = 0; i < n; ++i) {
      UK k = KeySer::deserialize(in);
      m.insert_or_assign(std::move(k), ValueSer::deserialize(in));
    }
    return m;
  }
};

/// Writes a length-prefixed byte string (the snapshot format's strings).
void writeBytesField(DataOutputView& out, std::string_view bytes);

}  // namespace internal

}  // namespace sluice::runtime::state

#pragma once
/// Pieces shared by the heap and RocksDB keyed state tables of this module: the current key, the heap
/// table's and timer queue's (key, namespace) bytes and their hash, and the serializers of a whole list and a whole user map in the
/// canonical snapshot form. Internal to runtime/state (included by keyed_state.h and
/// rocksdb_state_table.h only). Threading: the task thread only.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "runtime/serialization/type_serializer.h"

namespace sluice::runtime::state {
namespace internal {

/// A hash of in-memory bytes, 8 at a time (a heap table's or timer queue's slot hash; never persisted, so
/// it may change between versions). The byte-wise FNV of common/hash.h took a tenth of a windowed job's
/// time on a 8-byte key and a 16-byte window namespace.
[[gnu::always_inline]] inline uint64_t fastBytesHash(std::string_view s, uint64_t seed = 0) {
  uint64_t h = seed ^ (s.size() * 0x9e3779b97f4a7c15ull);
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ mix64(w)) * 0xff51afd7ed558ccdull;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ mix64(w ^ (static_cast<uint64_t>(n) << 59))) * 0xff51afd7ed558ccdull;
  }
  return h ^ (h >> 32);
}

/// True when the `n` bytes at `a` and `b` are equal: 8 bytes at a time, inline (keys and namespaces are
/// short; a libc memcmp call cost more than the comparison).
[[gnu::always_inline]] inline bool bytesEqual(const char* a, const char* b, size_t n) {
  for (; n >= 8; a += 8, b += 8, n -= 8) {
    uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) return false;
  }
  for (; n > 0; ++a, ++b, --n) {
    if (*a != *b) return false;
  }
  return true;
}

/// (key, namespace) of a heap entry or timer, owned: the key bytes then the namespace bytes, inline up to
/// kInline bytes (a window's 8-byte key and 16-byte namespace fit), else in one heap block, so making an
/// entry allocates nothing more than the entry in the common case.
class StateKey {
 public:
  static constexpr size_t kInline = 32;
  StateKey() = default;
  StateKey(std::string_view key, std::string_view ns) { assign(key, ns); }
  StateKey(const StateKey& o) { assign(o.key(), o.ns()); }
  StateKey& operator=(const StateKey& o) {
    if (this != &o) assign(o.key(), o.ns());
    return *this;
  }
  StateKey(StateKey&& o) noexcept { *this = std::move(o); }
  StateKey& operator=(StateKey&& o) noexcept {
    key_len_ = o.key_len_;
    size_ = o.size_;
    heap_ = std::move(o.heap_);
    if (!heap_) std::memcpy(inline_, o.inline_, size_);
    return *this;
  }
  void assign(std::string_view key, std::string_view ns) {
    key_len_ = static_cast<uint32_t>(key.size());
    size_ = static_cast<uint32_t>(key.size() + ns.size());
    char* p = inline_;
    if (size_ > kInline) {
      heap_ = std::make_unique<char[]>(size_);
      p = heap_.get();
    } else {
      heap_.reset();
    }
    if (!key.empty()) std::memcpy(p, key.data(), key.size());
    if (!ns.empty()) std::memcpy(p + key.size(), ns.data(), ns.size());
  }
  std::string_view key() const { return {data(), key_len_}; }
  std::string_view ns() const { return {data() + key_len_, size_ - key_len_}; }
  /// True when this is (key, ns).
  bool equals(std::string_view key, std::string_view ns) const {
    return key.size() == key_len_ && key.size() + ns.size() == size_ && bytesEqual(data(), key.data(), key.size()) &&
           bytesEqual(data() + key_len_, ns.data(), ns.size());
  }

 private:
  const char* data() const { return heap_ ? heap_.get() : inline_; }
  char inline_[kInline];
  std::unique_ptr<char[]> heap_;
  uint32_t key_len_ = 0;
  uint32_t size_ = 0;
};

/// The slot hash of (key, namespace) in a heap table or timer bucket, from the key's fastBytesHash
/// (computed once per current key, CurrentKey::hash).
[[gnu::always_inline]] inline uint64_t stateKeyHashFrom(uint64_t key_hash, std::string_view ns) {
  return ns.empty() ? key_hash ^ (key_hash >> 32) : fastBytesHash(ns, key_hash);
}
/// The slot hash of (key, namespace) in a heap table or timer bucket.
inline uint64_t stateKeyHash(std::string_view key, std::string_view ns) {
  return stateKeyHashFrom(fastBytesHash(key), ns);
}

}  // namespace internal

/// Bytes kept inline up to kInline (a fixed-width key, a window namespace), else in a string: assigning
/// short bytes copies them, no string assignment.
class SmallBytes {
 public:
  static constexpr size_t kInline = 16;
  std::string_view view() const { return {size_ <= kInline ? inline_ : long_.data(), size_}; }
  void assign(std::string_view b) {
    size_ = b.size();
    if (b.size() <= kInline) {
      if (!b.empty()) std::memcpy(inline_, b.data(), b.size());
    } else {
      long_.assign(b);
    }
  }

 private:
  char inline_[kInline] = {};
  size_t size_ = 0;
  std::string long_;
};

/// The key the backend's states are scoped to: key bytes, their key group (-1: none set yet) and their
/// internal::fastBytesHash (the first half of every slot hash, computed once per key instead of once per
/// state access; in memory only).
struct CurrentKey {
  std::string_view bytes() const { return bytes_.view(); }
  void assign(std::string_view key) {
    bytes_.assign(key);
    hash = internal::fastBytesHash(key);
  }
  int32_t key_group = -1;
  uint64_t hash = 0;

 private:
  SmallBytes bytes_;
};

namespace internal {

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

#pragma once
/// Stable hashing of DataStream keys, independent of std::hash, so key groups (and thus which subtask
/// owns a key) are the same in every run and on every machine. Numbers hash by value (integral types and
/// bool as int64, floating point as double with -0.0 == 0.0 and one NaN), strings by their bytes, tuples,
/// pairs and SLUICE_TYPE structs by combining their fields in order, optionals as NULL or their value.
/// A key hashes exactly like the same values as SQL key columns (runtime::hashKey), so a DataStream keyed by
/// (airline, day) and a SQL GROUP BY airline, day agree on key groups.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/hash.h"
#include "runtime/serialization/type_traits.h"

namespace sluice::runtime {

/// Seed of every key hash and the hash of a NULL (empty optional) value; shared with runtime::hashKey.
inline constexpr uint64_t kKeyHashSeed = 0x2545f4914f6cdd1dull;
inline constexpr uint64_t kNullKeyHash = 0x9e3779b97f4a7c15ull;

template <typename K>
uint64_t keyHash(const K& key);

/// Hash of one key field (what SQL hashes per column).
template <typename V>
uint64_t keyFieldHash(const V& v) {
  if constexpr (std::is_same_v<V, bool> || std::is_integral_v<V> || std::is_enum_v<V>) {
    return mix64(static_cast<uint64_t>(static_cast<int64_t>(v)));
  } else if constexpr (std::is_floating_point_v<V>) {
    double d = static_cast<double>(v);
    if (d == 0.0) d = 0.0;
    if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    return mix64(bits);
  } else if constexpr (std::is_convertible_v<const V&, std::string_view>) {
    return hashBytes(std::string_view(v));
  } else if constexpr (IsOptional<V>::value) {
    return v ? keyFieldHash(*v) : kNullKeyHash;
  } else {
    return keyHash(v);  // nested composite: its own combined hash
  }
}

/// The stable hash of a key: hashCombine over the fields starting from kKeyHashSeed (one field for a
/// scalar key). Pure, any thread.
template <typename K>
uint64_t keyHash(const K& key) {
  uint64_t h = kKeyHashSeed;
  if constexpr (IsPair<K>::value) {
    h = hashCombine(h, keyFieldHash(key.first));
    h = hashCombine(h, keyFieldHash(key.second));
  } else if constexpr (IsTuple<K>::value) {
    std::apply([&](const auto&... e) { ((h = hashCombine(h, keyFieldHash(e))), ...); }, key);
  } else if constexpr (IsVector<K>::value) {
    for (const auto& e : key) h = hashCombine(h, keyFieldHash(e));
  } else if constexpr (DeclaredType<K>) {
    forEachField(key, [&](const char*, const auto& f) { h = hashCombine(h, keyFieldHash(f)); });
  } else {
    h = hashCombine(h, keyFieldHash(key));
  }
  return h;
}

/// A hasher for unordered containers of keys, built on keyHash (deterministic iteration across runs).
struct StableKeyHasher {
  template <typename K>
  size_t operator()(const K& key) const {
    return static_cast<size_t>(keyHash(key));
  }
};

}  // namespace sluice::runtime

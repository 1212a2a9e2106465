#pragma once
/// Hashing for key groups, as Flink's KeyGroupRangeAssignment and MathUtils.murmurHash.

#include <cstdint>
#include <string_view>

namespace sluice {

/// Flink's MathUtils.murmurHash(int): a murmur3 finalizer over a 32-bit code, result >= 0.
inline int32_t murmurHash(int32_t code) {
  uint32_t h = static_cast<uint32_t>(code);
  h *= 0xcc9e2d51u;
  h = (h << 15) | (h >> 17);
  h *= 0x1b873593u;
  h = (h << 13) | (h >> 19);
  h = h * 5u + 0xe6546b64u;
  h ^= 4u;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  int32_t r = static_cast<int32_t>(h);
  if (r >= 0) return r;
  if (r != INT32_MIN) return -r;
  return 0;
}

/// 64-bit mix of a value (splitmix64 finalizer); used to build key hash codes.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/// FNV-1a over bytes, then mixed; stable across runs and machines.
inline uint64_t hashBytes(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return mix64(h);
}

/// Combines two hash codes (order matters).
inline uint64_t hashCombine(uint64_t a, uint64_t b) { return mix64(a * 31 + b + 0x9e3779b97f4a7c15ull); }

/// Key group of a key hash: murmurHash(hash) % maxParallelism (Flink's assignToKeyGroup).
inline int32_t assignToKeyGroup(uint64_t keyHash, int32_t maxParallelism) {
  int32_t code = static_cast<int32_t>(keyHash ^ (keyHash >> 32));
  // murmurHash is >= 0, so for a power of two (the default 128) the mask equals the remainder.
  if ((maxParallelism & (maxParallelism - 1)) == 0) return murmurHash(code) & (maxParallelism - 1);
  return murmurHash(code) % maxParallelism;
}

/// Operator (subtask) index owning a key group: keyGroup * parallelism / maxParallelism
/// (Flink's computeOperatorIndexForKeyGroup).
inline int32_t operatorIndexForKeyGroup(int32_t maxParallelism, int32_t parallelism, int32_t keyGroup) {
  return static_cast<int32_t>(static_cast<int64_t>(keyGroup) * parallelism / maxParallelism);
}

}  // namespace sluice

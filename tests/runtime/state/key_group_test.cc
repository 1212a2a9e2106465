#include "runtime/state/key_group.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/hash.h"

namespace sluice::runtime::state {
namespace {

// Flink's MathUtils.murmurHash written out again, on 64-bit integers masked to 32 bits, so the test does
// not share code with common/hash.h.
int64_t referenceMurmur(int64_t code) {
  const uint64_t m = 0xffffffffull;
  auto rotl = [&](uint64_t x, int r) { return ((x << r) | (x >> (32 - r))) & m; };
  uint64_t h = static_cast<uint64_t>(code) & m;
  h = (h * 0xcc9e2d51ull) & m;
  h = rotl(h, 15);
  h = (h * 0x1b873593ull) & m;
  h = rotl(h, 13);
  h = (h * 5 + 0xe6546b64ull) & m;
  h ^= 4;
  h ^= h >> 16;
  h = (h * 0x85ebca6bull) & m;
  h ^= h >> 13;
  h = (h * 0xc2b2ae35ull) & m;
  h ^= h >> 16;
  int64_t s = h >= 0x80000000ull ? static_cast<int64_t>(h) - 0x100000000ll : static_cast<int64_t>(h);
  if (s == -0x80000000ll) return 0;
  return s < 0 ? -s : s;
}

TEST(KeyGroupTest, MurmurOfSmallIntsMatchesTheAlgorithm) {
  // Values of the algorithm worked through for these codes (and mod 128).
  EXPECT_EQ(referenceMurmur(0), 593689054);
  EXPECT_EQ(referenceMurmur(1), 68075478);
  EXPECT_EQ(referenceMurmur(42), 1134849565);
  for (int32_t code = -50; code <= 50; ++code) EXPECT_EQ(murmurHash(code), referenceMurmur(code)) << code;
  EXPECT_EQ(KeyGroupRangeAssignment::assignToKeyGroup(0, 128), 94);
  EXPECT_EQ(KeyGroupRangeAssignment::assignToKeyGroup(1, 128), 86);
  EXPECT_EQ(KeyGroupRangeAssignment::assignToKeyGroup(2, 128), 127);
  EXPECT_EQ(KeyGroupRangeAssignment::assignToKeyGroup(3, 128), 113);
  EXPECT_EQ(KeyGroupRangeAssignment::assignToKeyGroup(42, 128), 29);
}

TEST(KeyGroupTest, RangesForMaxParallelism128) {
  auto r = [](int p, int i) { return KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(128, p, i); };
  EXPECT_EQ(r(1, 0), KeyGroupRange::of(0, 127));
  EXPECT_EQ(r(2, 0), KeyGroupRange::of(0, 63));
  EXPECT_EQ(r(2, 1), KeyGroupRange::of(64, 127));
  // p=3: ceil(128/3)=43, (256-1)/3=85, ceil(256/3)=86.
  EXPECT_EQ(r(3, 0), KeyGroupRange::of(0, 42));
  EXPECT_EQ(r(3, 1), KeyGroupRange::of(43, 85));
  EXPECT_EQ(r(3, 2), KeyGroupRange::of(86, 127));
  EXPECT_EQ(r(4, 0), KeyGroupRange::of(0, 31));
  EXPECT_EQ(r(4, 1), KeyGroupRange::of(32, 63));
  EXPECT_EQ(r(4, 2), KeyGroupRange::of(64, 95));
  EXPECT_EQ(r(4, 3), KeyGroupRange::of(96, 127));
  // The owner of every group agrees with the ranges.
  for (int p = 1; p <= 7; ++p) {
    for (int g = 0; g < 128; ++g) {
      const int owner = KeyGroupRangeAssignment::computeOperatorIndexForKeyGroup(128, p, g);
      EXPECT_TRUE(r(p, owner).contains(g)) << p << " " << g;
    }
  }
}

TEST(KeyGroupTest, DefaultMaxParallelism) {
  EXPECT_EQ(KeyGroupRangeAssignment::computeDefaultMaxParallelism(1), 128);
  EXPECT_EQ(KeyGroupRangeAssignment::computeDefaultMaxParallelism(85), 128);   // 85+42 = 127 -> 128
  EXPECT_EQ(KeyGroupRangeAssignment::computeDefaultMaxParallelism(86), 256);   // 86+43 = 129 -> 256
  EXPECT_EQ(KeyGroupRangeAssignment::computeDefaultMaxParallelism(200), 512);  // 300 -> 512
  EXPECT_EQ(KeyGroupRangeAssignment::computeDefaultMaxParallelism(30000), 32768);
  EXPECT_THROW(KeyGroupRangeAssignment::computeDefaultMaxParallelism(0), ConfigError);
  EXPECT_THROW(KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(4, 5, 0), ConfigError);
}

TEST(KeyGroupTest, RangeOperations) {
  const KeyGroupRange a = KeyGroupRange::of(10, 20);
  EXPECT_EQ(a.size(), 11);
  EXPECT_TRUE(a.contains(10));
  EXPECT_TRUE(a.contains(20));
  EXPECT_FALSE(a.contains(21));
  EXPECT_EQ(a.intersect(KeyGroupRange::of(15, 30)), KeyGroupRange::of(15, 20));
  EXPECT_TRUE(a.intersect(KeyGroupRange::of(21, 30)).empty());
  EXPECT_EQ(a.intersect(KeyGroupRange::of(21, 30)).size(), 0);
  EXPECT_TRUE(KeyGroupRange().empty());
}

}  // namespace
}  // namespace sluice::runtime::state

#include "common/hash.h"

#include <set>

#include <gtest/gtest.h>

namespace sluice {
namespace {

// Flink's MathUtils.murmurHash(0) and the key-group formulas of KeyGroupRangeAssignment.
TEST(HashTest, OperatorIndexForKeyGroup) {
  // keyGroup * parallelism / maxParallelism: with 128 key groups and parallelism 3,
  // groups 0..42 -> 0 (42*3/128 = 0.98), 43..85 -> 1 (43*3/128 = 1.007), 86..127 -> 2 (86*3/128 = 2.01).
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 0), 0);
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 42), 0);
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 43), 1);
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 85), 1);
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 86), 2);
  EXPECT_EQ(operatorIndexForKeyGroup(128, 3, 127), 2);
}

TEST(HashTest, MurmurIsNonNegativeAndKeyGroupsInRange) {
  for (int32_t code : {0, 1, -1, 42, INT32_MIN, INT32_MAX}) {
    EXPECT_GE(murmurHash(code), 0);
    int kg = assignToKeyGroup(static_cast<uint64_t>(static_cast<int64_t>(code)), 128);
    EXPECT_GE(kg, 0);
    EXPECT_LT(kg, 128);
  }
}

TEST(HashTest, HashBytesIsStableAndSpreads) {
  EXPECT_EQ(hashBytes("AA"), hashBytes(std::string("A") + "A"));
  EXPECT_NE(hashBytes("AA"), hashBytes("AB"));
  // 14 airline codes should not all land in one key group of 128.
  const char* codes[] = {"WN", "DL", "EV", "OO", "AA", "UA", "US", "MQ", "B6", "AS", "NK", "F9", "HA", "VX"};
  std::set<int> groups;
  for (const char* c : codes) groups.insert(assignToKeyGroup(hashBytes(c), 128));
  EXPECT_GT(groups.size(), 7u);
}

}  // namespace
}  // namespace sluice

// ShiftTimeZone (Flink's TimeWindowUtil, FLIP-162). Expected instants are the examples of Flink's
// TimeWindowUtil.toEpochMillsForTimer comment, checked with python's zoneinfo; wall-clock values are the
// local date-time read as UTC (e.g. 2021-03-14 02:00 -> 1615687200000).

#include "table/runtime/time_window_util.h"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "common/error.h"

namespace sluice::table {
namespace {

TEST(ShiftTimeZoneTest, NoZoneAndUtcAreTheIdentity) {
  for (const char* id : {"", "UTC"}) {
    ShiftTimeZone z(id);
    EXPECT_FALSE(z.shifts()) << id;
    EXPECT_EQ(z.toUtcTimestampMills(1615716000000), 1615716000000);
    EXPECT_EQ(z.toEpochMillsForTimer(1615687200000), 1615687200000);
  }
}

TEST(ShiftTimeZoneTest, FixedRulesShiftByTheOffset) {
  ShiftTimeZone z("Asia/Shanghai");
  EXPECT_TRUE(z.shifts());
  // The doc example: epoch 5 in GMT+08:00 is 1970-01-01 08:00:05.
  EXPECT_EQ(z.toUtcTimestampMills(5), 8 * 3600000 + 5);
  EXPECT_EQ(z.toEpochMills(8 * 3600000 + 5), 5);
  EXPECT_EQ(z.toEpochMillsForTimer(8 * 3600000 + 5), 5);
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(z.toUtcTimestampMills(max), max);
  EXPECT_EQ(z.toEpochMillsForTimer(max - 1), max - 1);
}

TEST(ShiftTimeZoneTest, SpringForwardGapFiresAtTheFirstInstantAfterIt) {
  ShiftTimeZone z("America/Los_Angeles");
  // 2021-03-14: 02:00 to 02:59:59 do not exist; 03:00 PDT = 1615716000000.
  EXPECT_EQ(z.toEpochMillsForTimer(1615687200000), 1615716000000);  // 02:00
  EXPECT_EQ(z.toEpochMillsForTimer(1615690799000), 1615716000000);  // 02:59:59
  EXPECT_EQ(z.toEpochMillsForTimer(1615690800000), 1615716000000);  // 03:00
  // toEpochMills moves a time in the gap forward by the gap (LocalDateTime.atZone): 02:59:59 -> 03:59:59 PDT.
  EXPECT_EQ(z.toEpochMills(1615690799000), 1615719599000);
}

TEST(ShiftTimeZoneTest, FallBackOverlapFiresAfterTheSecondPass) {
  ShiftTimeZone z("America/Los_Angeles");
  // 2021-11-07: 01:00 PDT = 1636272000000, 01:00 PST = 1636275600000.
  EXPECT_EQ(z.toEpochMillsForTimer(1636243200000), 1636268400000);  // 00:00
  EXPECT_EQ(z.toEpochMillsForTimer(1636246800000), 1636275600000);  // 01:00: the second one
  EXPECT_EQ(z.toEpochMillsForTimer(1636250400000), 1636279200000);  // 02:00
  EXPECT_EQ(z.toEpochMills(1636246800000), 1636272000000);          // window_time: the earlier one
  EXPECT_EQ(z.toUtcTimestampMills(1636275600000), 1636246800000);
  EXPECT_TRUE(z.isWindowFired(1636250400000, 1636279200000 - 1));   // [01:00, 02:00) at 01:59:59.999 PST
  EXPECT_FALSE(z.isWindowFired(1636250400000, 1636279200000 - 2));
}

TEST(ShiftTimeZoneTest, UnknownZoneIsAUserError) { EXPECT_THROW(ShiftTimeZone("Mars/Olympus"), UserError); }

}  // namespace
}  // namespace sluice::table

// Session zones as Flink's TableConfigValidation.validateTimeZone accepts them: an id must read the same
// through java.util.TimeZone and java.time.ZoneId. Expected answers worked out from the two JDK parsers'
// documented grammars (TimeZone custom ids: GMT[+-]H[H][[:]MM], hours < 24; ZoneOffset: +-H, +-HH,
// +-HH:MM, +-HHMM, at most 18:00; ZoneId.SHORT_IDS for EST/MST/HST).
#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "table/functions/time_zone.h"

namespace sluice::table {
namespace {

TEST(SessionZone, AcceptsTzdbIdsUtcAndGmtOffsets) {
  for (const char* id : {"default", "UTC", "GMT", "Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata", "CET",
                         "Etc/GMT+8", "GMT+8", "GMT-08", "GMT+0530", "GMT+05:30", "GMT-18:00", "GMT+00:00", "GMT0"})
    EXPECT_TRUE(ZoneRules::isValidSessionZone(id)) << id;
}

TEST(SessionZone, RefusesIdsTheTwoJdkParsersReadDifferently) {
  for (const char* id : {"Z", "+08:00", "-3", "UTC+8", "UTC-03:00", "UT", "UT+1", "EST", "MST", "HST", "PST",
                         "utc", "GMT+18:01", "GMT+19", "GMT+5:30", "GMT+530", "GMT+08:00:00", "GMT+", "GMT08",
                         "Mars/Olympus", ""})
    EXPECT_FALSE(ZoneRules::isValidSessionZone(id)) << id;
}

TEST(SessionZone, ConfigurationRefusesAnInvalidZoneWhenSet) {
  Configuration c;
  c.set("table.local-time-zone", "Asia/Shanghai");
  try {
    c.set("table.local-time-zone", "UTC+8");
    FAIL() << "UTC+8 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'table.local-time-zone'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GMT-03:00"), std::string::npos) << e.what();
  }
  EXPECT_EQ(c.get(options::kLocalTimeZone), "Asia/Shanghai");  // the refused value changed nothing
}

TEST(ZoneIdOf, OffsetsStopAt18Hours) {
  // ZoneId.of semantics (function arguments): offsets with or without a prefix, up to +-18:00.
  EXPECT_EQ(ZoneRules::resolve("UTC+18:00").offsetAt(0), 18 * 3600000LL);
  EXPECT_EQ(ZoneRules::resolve("-05:30").offsetAt(0), -(5 * 3600000LL + 30 * 60000LL));
  EXPECT_EQ(ZoneRules::resolve("Z").offsetAt(0), 0);
  EXPECT_THROW(ZoneRules::resolve("UTC+18:30"), UserError);
  EXPECT_THROW(ZoneRules::resolve("+19"), UserError);
}

}  // namespace
}  // namespace sluice::table

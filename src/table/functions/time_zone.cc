#include "table/functions/time_zone.h"

#include <cctype>
#include <chrono>
#include <cstdlib>

#include <date/tz.h>
#include <fmt/format.h>

#include "common/error.h"

namespace sluice::table {

namespace {

/// "+08:00", "-3", "+0530" after GMT/UTC or alone -> milliseconds; false when not an offset.
bool parseOffset(std::string_view s, int64_t& ms) {
  if (s.empty()) {
    ms = 0;
    return true;
  }
  if (s[0] != '+' && s[0] != '-') return false;
  const int sign = s[0] == '-' ? -1 : 1;
  s.remove_prefix(1);
  int digits[4] = {0, 0, 0, 0};
  int n = 0;
  bool colon = false;
  for (char c : s) {
    if (c == ':' && n == 2 && !colon) { colon = true; continue; }
    if (!std::isdigit(static_cast<unsigned char>(c)) || n == 4) return false;
    digits[n++] = c - '0';
  }
  int hours = 0, minutes = 0;
  if (n == 1) hours = digits[0];
  else if (n == 2) hours = digits[0] * 10 + digits[1];
  else if (n == 4) { hours = digits[0] * 10 + digits[1]; minutes = digits[2] * 10 + digits[3]; }
  else return false;
  if (hours > 18 || minutes > 59 || (hours == 18 && minutes > 0)) return false;  // ZoneOffset's range
  ms = sign * (hours * 3600000LL + minutes * 60000LL);
  return true;
}

bool tryResolve(std::string_view id, const date::time_zone*& tz, int64_t& fixed) {
  tz = nullptr;
  fixed = 0;
  std::string_view rest = id;
  if (id == "Z") return true;
  for (std::string_view prefix : {"UTC", "GMT", "UT"}) {
    if (rest.substr(0, prefix.size()) == prefix && parseOffset(rest.substr(prefix.size()), fixed)) return true;
  }
  if (parseOffset(rest, fixed) && !rest.empty()) return true;
  try {
    if (id == "default") {
      const char* env = std::getenv("TZ");
      tz = env && *env ? date::locate_zone(env[0] == ':' ? env + 1 : env) : date::current_zone();
    } else {
      tz = date::locate_zone(std::string(id));
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

ZoneRules ZoneRules::resolve(std::string_view id) {
  ZoneRules z;
  if (!tryResolve(id, z.tz_, z.fixed_ms_))
    throw UserError(fmt::format("Invalid time zone '{}': use a zone id of the tz database such as "
                                "'America/Los_Angeles', or a fixed offset such as 'GMT-08:00'",
                                id));
  z.id_ = z.tz_ ? std::string(z.tz_->name()) : std::string(id);
  return z;
}

ZoneRules ZoneRules::resolveOrGmt(std::string_view id) {
  ZoneRules z;
  if (!tryResolve(id, z.tz_, z.fixed_ms_)) {
    z.tz_ = nullptr;
    z.fixed_ms_ = 0;
  }
  z.id_ = std::string(id);
  return z;
}

int64_t ZoneRules::offsetAt(int64_t utc_ms) const {
  if (!tz_) return fixed_ms_;
  using namespace std::chrono;
  const date::sys_info info = tz_->get_info(date::sys_time<milliseconds>(milliseconds(utc_ms)));
  return duration_cast<milliseconds>(info.offset).count();
}

int64_t ZoneRules::toUtc(int64_t local_ms) const {
  if (!tz_) return local_ms - fixed_ms_;
  using namespace std::chrono;
  const date::local_time<milliseconds> local{milliseconds(local_ms)};
  const date::local_info info = tz_->get_info(local);
  switch (info.result) {
    case date::local_info::unique:
    case date::local_info::ambiguous:
      return local_ms - duration_cast<milliseconds>(info.first.offset).count();
    case date::local_info::nonexistent:
      // In a gap, the offset before it applies (02:30 in a spring-forward hour becomes 03:30).
      return local_ms - duration_cast<milliseconds>(info.first.offset).count();
  }
  return local_ms;
}

bool ZoneRules::isValidSessionZone(std::string_view id) {
  if (id == "default") return true;
  if (id.substr(0, 4) == "GMT+" || id.substr(0, 4) == "GMT-") {
    int64_t ms = 0;
    // java.util.TimeZone's custom ids also take 'GMT+530', which ZoneId.of refuses; parseOffset does too.
    return parseOffset(id.substr(3), ms);
  }
  // java.util.TimeZone maps these three to fixed offsets (ZoneId.SHORT_IDS), ZoneId.of to tz regions.
  if (id == "EST" || id == "MST" || id == "HST") return false;
  try {
    date::locate_zone(std::string(id));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

bool ZoneRules::useDaylightTime() const {
  if (!tz_) return false;
  using namespace std::chrono;
  const auto now = time_point_cast<seconds>(system_clock::now());
  // Two instants half a year apart: one of them is in summer time wherever summer time is kept.
  for (const auto t : {now, now + hours(24 * 183)})
    if (tz_->get_info(t).save != minutes(0)) return true;
  return false;
}

}  // namespace sluice::table

namespace sluice::options {

namespace {
void checkSessionZone(const std::string& key, const std::string& value) {
  if (!table::ZoneRules::isValidSessionZone(value))
    throwBadConfigValue(key, value,
                        "Invalid time zone. The value should be a Time Zone Database (TZDB) ID such as "
                        "'America/Los_Angeles' to include daylight saving time. Fixed offsets are supported "
                        "using 'GMT-03:00' or 'GMT+03:00'. Or use 'UTC' to indicate no offset.");
}
}  // namespace

const ConfigOption<std::string> kLocalTimeZone(ConfigOptionSpec{
    .key = "table.local-time-zone",
    .type = ConfigType::kString,
    .default_value = "default",
    .description = "Session time zone for TIMESTAMP_LTZ conversions: a tz database id, 'UTC', or 'GMT+hh:mm'.",
    .check = &checkSessionZone});

}  // namespace sluice::options

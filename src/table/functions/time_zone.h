#pragma once
/// Time zones as Flink's session time zone (`table.local-time-zone`), TIMESTAMP_LTZ and CONVERT_TZ use
/// them (java.time.ZoneId / java.util.TimeZone rules) over the operating system's tz database (Howard
/// Hinnant's date/tz, USE_OS_TZDB). Public: the window operators shift TIMESTAMP_LTZ time attributes
/// into the session zone with it, the SQL client prints TIMESTAMP_LTZ values with it. Immutable after
/// construction; safe to share between threads.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/config.h"

namespace date {
class time_zone;
}

namespace sluice::table {

class ZoneRules {
 public:
  /// A zone id as java.time.ZoneId.of reads it (the zone arguments of functions): a tz database name
  /// ('Europe/Berlin'), 'UTC', 'GMT', 'Z', a fixed offset ('GMT+08:00', 'UTC-3', '+05:30'; at most
  /// 18:00), or 'default' (the system zone: TZ, else /etc/localtime). Throws UserError naming the id
  /// when it is none of these. Every value `table.local-time-zone` accepts resolves.
  static ZoneRules resolve(std::string_view id);
  /// Whether `id` is a session zone Flink accepts (TableConfigValidation.validateTimeZone: the id reads
  /// the same as java.util.TimeZone and as java.time.ZoneId): 'default', a tz database name other than
  /// EST/MST/HST (which java.util.TimeZone reads as fixed offsets), or 'GMT' with an offset ±H, ±HH,
  /// ±HHMM or ±HH:MM up to 18:00. 'Z', '+05:30', 'UTC+8', 'UT' and short ids as 'PST' are refused.
  static bool isValidSessionZone(std::string_view id);
  /// As java.util.TimeZone.getTimeZone: an unknown id is GMT (CONVERT_TZ's behaviour in Flink).
  static ZoneRules resolveOrGmt(std::string_view id);

  /// The zone's offset from UTC at the instant `utc_ms`, in milliseconds.
  int64_t offsetAt(int64_t utc_ms) const;
  /// Wall-clock milliseconds in this zone of the instant `utc_ms`.
  int64_t toLocal(int64_t utc_ms) const { return utc_ms + offsetAt(utc_ms); }
  /// The instant of the wall-clock time `local_ms`: the earlier one when the clock was set back, and
  /// shifted by the gap when it was set forward (java.util.Calendar's lenient rule).
  int64_t toUtc(int64_t local_ms) const;
  /// Whether the zone observes daylight saving time in its current rules (java.util.TimeZone's
  /// useDaylightTime: America/Los_Angeles yes; Asia/Shanghai, which last did in 1991, and fixed offsets
  /// no). Judged on the rules in force within a year from now.
  bool useDaylightTime() const;
  const std::string& id() const { return id_; }

 private:
  const date::time_zone* tz_ = nullptr;  ///< null for a fixed offset
  int64_t fixed_ms_ = 0;
  std::string id_;
};

namespace internal {
using table::ZoneRules;
}  // namespace internal

}  // namespace sluice::table

namespace sluice::options {
/// `table.local-time-zone` (default 'default': the system zone). A value ZoneRules::isValidSessionZone
/// refuses is a ConfigError when set (SET, -D, the config file) with Flink's message.
extern const ConfigOption<std::string> kLocalTimeZone;
}  // namespace sluice::options

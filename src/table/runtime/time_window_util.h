#pragma once
/// Flink's TimeWindowUtil (FLIP-162): how windows over a TIMESTAMP_LTZ time attribute are assigned on the
/// session time zone's wall clock and fired at instants. Used by the window operators of this module.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "table/functions/time_zone.h"

namespace sluice::table {

/// Flink's TimeWindowUtil for one window's shift time zone (`WindowSpec::time_zone`): windows over a
/// TIMESTAMP_LTZ time attribute are assigned on the zone's wall clock ("UTC timestamp mills": the local
/// date-time read as if it were UTC) and fired at instants. Without a zone (or with 'UTC') every
/// conversion is the identity. Immutable; any thread.
class ShiftTimeZone {
 public:
  ShiftTimeZone() = default;  ///< no shift
  /// `id` empty = no shift; else resolved by ZoneRules::resolve (UserError naming an unknown zone).
  explicit ShiftTimeZone(const std::string& id);
  bool shifts() const { return zone_.has_value(); }
  /// toUtcTimestampMills: the wall-clock millis of the instant `epoch_ms` (INT64_MAX, the final
  /// watermark, unchanged).
  int64_t toUtcTimestampMills(int64_t epoch_ms) const;
  /// toEpochMills: the instant of the wall-clock millis `local_ms` (a gap moves forward by its length, an
  /// overlap takes the earlier instant, as LocalDateTime.atZone) — a window_time's value.
  int64_t toEpochMills(int64_t local_ms) const;
  /// toEpochMillsForTimer: the instant at which a window whose last wall-clock millisecond is `local_ms`
  /// fires. In a zone with daylight saving time (ZoneRules::useDaylightTime): a time skipped by a
  /// spring-forward gap fires at the first instant after the gap (its hour's start), a time the
  /// fall-back repeats fires after its second occurrence; else toEpochMills.
  int64_t toEpochMillsForTimer(int64_t local_ms) const;
  /// isWindowFired: `progress` (watermark or processing time, an instant) has reached the window ending
  /// at wall-clock `window_end`.
  bool isWindowFired(int64_t window_end, int64_t progress) const {
    if (window_end == std::numeric_limits<int64_t>::max()) return false;
    return progress >= toEpochMillsForTimer(window_end - 1);
  }

 private:
  std::optional<ZoneRules> zone_;
  bool daylight_ = false;
};

}  // namespace sluice::table

// Flink's TimeWindowUtil (FLIP-162): window assignment and firing in a shift time zone.

#include <limits>

#include "table/runtime/time_window_util.h"

namespace sluice::table {

namespace {
constexpr int64_t kHourMs = 3600 * 1000;
// Times beyond year ~33658 (the final watermark, a session end saturated at INT64_MAX) are not shifted:
// no zone rule applies there, and the zone database's arithmetic would overflow.
constexpr int64_t kFarMs = 1'000'000'000'000'000;
bool far(int64_t ms) { return ms > kFarMs || ms < -kFarMs; }
}  // namespace

ShiftTimeZone::ShiftTimeZone(const std::string& id) {
  if (id.empty()) return;
  ZoneRules z = ZoneRules::resolve(id);
  // Flink compares with the zone id 'UTC' only: other zones at offset 0 still convert (to the same values).
  if (z.id() == "UTC") return;
  daylight_ = z.useDaylightTime();
  zone_ = std::move(z);
}

int64_t ShiftTimeZone::toUtcTimestampMills(int64_t epoch_ms) const {
  if (!zone_ || far(epoch_ms)) return epoch_ms;
  return zone_->toLocal(epoch_ms);
}

int64_t ShiftTimeZone::toEpochMills(int64_t local_ms) const {
  if (!zone_ || far(local_ms)) return local_ms;
  return zone_->toUtc(local_ms);
}

int64_t ShiftTimeZone::toEpochMillsForTimer(int64_t local_ms) const {
  if (!zone_ || far(local_ms)) return local_ms;
  const int64_t t1 = zone_->toUtc(local_ms);
  if (!daylight_) return t1;
  // The instants of the wall clock at local_ms and one hour later: equal when local_ms lies in a gap (both
  // land after it), more than an hour apart when local_ms is repeated by a fall-back.
  const int64_t t2 = zone_->toUtc(local_ms + kHourMs);
  if (t1 == t2) return t1 - t1 % kHourMs;  // Java's remainder: truncated, as C++'s
  if (t2 - t1 > kHourMs) return t1 + kHourMs;
  return t1;
}

}  // namespace sluice::table

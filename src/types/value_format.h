#pragma once
/// Text forms of values as Flink renders them (print connector, CAST to STRING), and calendar math.
/// Rules: Java's Double.toString / BigDecimal.toString and Flink's RowUtils (print format).

#include <cstdint>
#include <string>
#include <string_view>

#include "types/row_batch.h"

namespace sluice::types {

/// Java's Double.toString: "1.5", "2.0", "1.0E7", "1.0E-4", "NaN", "Infinity", "-0.0".
void formatDouble(double v, std::string& out);
/// Java's Float.toString of a FLOAT value (stored as a double that is an exact float): "1.1", "1.0E10".
void formatFloat(double v, std::string& out);
/// DECIMAL with exactly `scale` fraction digits: (375, 3) -> "0.375", (-5, 2) -> "-0.05".
void formatDecimal(int64_t unscaled, int32_t scale, std::string& out);
/// Java's BigDecimal.toString of a DECIMAL: plain as formatDecimal unless the adjusted exponent
/// (digits - 1 - scale) is below -6, then scientific: (0, 7) -> "0E-7", (15, 9) -> "1.5E-8".
void formatDecimalJava(int64_t unscaled, int32_t scale, std::string& out);

/// Civil date <-> days since 1970-01-01 (proleptic Gregorian).
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d);
void civilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d);

/// Broken-down wall-clock time of a TIMESTAMP stored as ms since the epoch.
struct DateTimeParts {
  int64_t year;
  unsigned month, day, hour, minute, second, millis;
};
DateTimeParts splitTimestamp(int64_t epoch_ms);
int64_t joinTimestamp(const DateTimeParts& p);

/// Print format of a TIMESTAMP: "2015-01-01T00:05" (seconds dropped on a whole minute),
/// "…T00:05:30", "…T00:05:30.100" (fraction only when non-zero, 3 digits).
void formatTimestampIso(int64_t epoch_ms, std::string& out);
/// SQL format of a TIMESTAMP(p) as CAST(... AS STRING) gives: "2015-01-01 00:05:00", with `precision`
/// fraction digits when precision > 0 ("2015-01-01 00:05:00.000").
void formatTimestampSql(int64_t epoch_ms, int32_t precision, std::string& out);
/// Print format of a TIMESTAMP_LTZ (java.time.Instant.toString, the zone never applies):
/// "1970-01-01T00:00:09Z", "…T00:00:09.999Z" (seconds always, a fraction of 3 digits only when non-zero).
void formatInstantIso(int64_t epoch_ms, std::string& out);
/// The text formats write a TIMESTAMP_LTZ in UTC with a 'Z' (Flink's TimeFormats
/// SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT / ISO8601_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT):
/// "2024-01-02 03:04:05Z" (`iso` false) or "2024-01-02T03:04:05.5Z" (`iso` true); seconds always, the
/// fraction without trailing zeros.
void formatInstantText(int64_t epoch_ms, bool iso, std::string& out);

/// DATE (days since the epoch) as "2024-01-02" (java.time.LocalDate.toString; the print and CAST form).
void formatDate(int64_t days, std::string& out);
/// Print format of a TIME (ms of the day): "10:15", "10:15:30", "10:15:30.500" (java.time.LocalTime).
void formatTimeIso(int64_t millis_of_day, std::string& out);
/// CAST(TIME(p) AS STRING): "10:15:30" plus `precision` fraction digits (at most 3 significant).
void formatTimeSql(int64_t millis_of_day, int32_t precision, std::string& out);
/// Parses "yyyy-[M]M-[d]d" (blanks around ignored) into days since the epoch; false when malformed or a
/// field is out of range ('2024-13-40'). Never throws.
bool parseDate(std::string_view text, int64_t& days);
/// Parses "[H]H:[m]m[:[s]s[.fraction]]" (blanks around ignored) into ms of the day; digits beyond
/// milliseconds are truncated (Flink keeps TIME in ms). False when malformed or out of range. Never throws.
bool parseTime(std::string_view text, int64_t& millis_of_day);

/// Parses a SQL timestamp "yyyy-[M]M-[d]d[( |T)[H]H:[m]m[:[s]s[.fraction]]]" (Flink's default
/// TIMESTAMP text, as CAST(s AS TIMESTAMP) and TO_TIMESTAMP(s) accept it; surrounding blanks ignored)
/// into ms since the epoch. Fraction digits beyond milliseconds are truncated; `fraction_digits`
/// (when given) receives how many were written. Returns false when the text is malformed or a field
/// is out of range (month 13, Feb 30, hour 24, ...). Never throws.
bool parseTimestamp(std::string_view text, int64_t& epoch_ms, int* fraction_digits = nullptr);

/// Parses decimal text "[+-]digits[.digits][(e|E)[+-]digits]" (blanks around ignored) into an unscaled
/// value with `scale` fraction digits, rounding HALF_UP like Java's BigDecimal.setScale. Returns false
/// when malformed or when the result does not fit in int64. Never throws.
bool parseDecimal(std::string_view text, int32_t scale, int64_t& unscaled);
/// Whether an unscaled DECIMAL value has at most `precision` digits (|unscaled| < 10^precision; any int64
/// for precision >= 19). A value past it is out of its type's range.
bool decimalFitsPrecision(int64_t unscaled, int32_t precision);

/// Parses a whole integer "[+-]digits" (blanks around ignored, as Flink's BinaryStringDataUtil.toLong
/// trims) into `value`; false when malformed or outside int64. Never throws.
bool parseInt64(std::string_view text, int64_t& value);

/// Parses a double as Java's Double.parseDouble does for ordinary text (blanks around ignored; also
/// "NaN", "Infinity", "-Infinity"); false when malformed. Never throws.
bool parseDouble(std::string_view text, double& value);
/// Java's Float.parseFloat: as parseDouble, rounded once to the nearest float. Never throws.
bool parseFloat(std::string_view text, float& value);

/// INTERVAL DAY TO SECOND (ms) as Flink prints and casts it: "+0 00:00:05.000", "-1 02:03:04.005".
void formatIntervalDayTime(int64_t millis, std::string& out);
/// Appends the text CAST(value AS STRING) gives for row `row` (Flink's cast rules, what its SQL client
/// shows): "TRUE"/"FALSE", "2015-01-01 00:05:00.000" with the TIMESTAMP's precision, "10:15:30", DECIMAL
/// with its scale; a TIMESTAMP_LTZ in UTC (callers that know the session zone convert it first). Appends
/// nothing for a NULL value's storage: callers check isNull first.
void formatSqlString(const Column& column, size_t row, std::string& out);
/// Appends one field in Flink's print format (see flink-print-format rules): "null" for NULL.
void formatField(const Column& column, size_t row, std::string& out);
/// Appends "+I[a, 1, 2015-01-01T00:05]" for row `row` of `batch`.
void formatRow(const RowBatch& batch, size_t row, std::string& out);

}  // namespace sluice::types

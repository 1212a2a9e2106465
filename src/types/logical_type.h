#pragma once
/// Flink's logical types (the subset the engine supports so far) with nullability, and RowType.
/// Physical representation inside a RowBatch column (see row_batch.h):
///   BOOLEAN, TINYINT, SMALLINT,
///   INT, BIGINT                 -> int64_t holding a value of the type's range (arithmetic wraps like Java)
///   DECIMAL(p,s)                -> int64_t unscaled value (value * 10^s); p <= 18 stored exactly,
///                                  larger declared precisions are stored in 64 bits and overflow is an error
///   TIMESTAMP(p)                -> int64_t milliseconds since 1970-01-01T00:00 (wall clock, no zone)
///   TIMESTAMP_LTZ(p)            -> int64_t milliseconds since 1970-01-01T00:00Z (an instant; shown, cast
///                                  and broken into fields in the session zone `table.local-time-zone`)
///   INTERVAL DAY TO SECOND      -> int64_t milliseconds
///   FLOAT (REAL)                -> double holding a value exactly representable as a 32-bit float
///   DOUBLE                      -> double
///   DATE                        -> int64_t days since 1970-01-01 (Flink: int days since epoch)
///   TIME(p)                     -> int64_t milliseconds of the day, 0..86399999 (Flink keeps millis for
///                                  every precision)
///   STRING / VARCHAR(n) / CHAR  -> bytes in the column's string arena
///   ROW<...>                    -> no column: the planner flattens a ROW column of a source into its
///                                  fields (nested projection push-down); a ROW value never reaches a batch

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sluice::types {

enum class TypeId : uint8_t {
  kNull,       ///< type of the bare NULL literal before inference
  kBoolean,
  kInt,
  kBigInt,
  kDouble,
  kDecimal,
  kVarchar,    ///< STRING is VARCHAR(2147483647)
  kChar,
  kTimestamp,  ///< TIMESTAMP(p) WITHOUT TIME ZONE
  kIntervalDayTime,
  // Appended so that the serialized ids of the older types stay the same.
  kTinyInt,
  kSmallInt,
  kFloat,      ///< FLOAT and REAL: 4-byte IEEE 754
  kDate,
  kTime,       ///< TIME(p) WITHOUT TIME ZONE
  kRow,        ///< ROW<name type, ...>: `fields` holds the field names and types
  kTimestampLtz,  ///< TIMESTAMP(p) WITH LOCAL TIME ZONE (Flink's TIMESTAMP_LTZ(p))
};

/// The last TypeId a RowBatch column can have (for validating serialized ids); kRow is never a column.
inline constexpr TypeId kLastTypeId = TypeId::kTimestampLtz;

struct RowType;

/// Flink's maximum VARCHAR length; VARCHAR of this length prints as STRING.
inline constexpr int32_t kMaxVarcharLength = 2147483647;
inline constexpr int32_t kMaxDecimalPrecision = 38;

/// A logical type. `precision` is the DECIMAL precision, the TIMESTAMP fractional precision, or the
/// VARCHAR/CHAR length; `scale` is the DECIMAL scale; `fields` the fields of a ROW (null otherwise).
struct LogicalType {
  TypeId id = TypeId::kNull;
  bool nullable = true;
  int32_t precision = 0;
  int32_t scale = 0;
  std::shared_ptr<const RowType> fields = nullptr;

  static LogicalType null() { return {TypeId::kNull, true, 0, 0}; }
  static LogicalType boolean(bool nullable = true) { return {TypeId::kBoolean, nullable, 0, 0}; }
  static LogicalType integer(bool nullable = true) { return {TypeId::kInt, nullable, 0, 0}; }
  static LogicalType bigint(bool nullable = true) { return {TypeId::kBigInt, nullable, 0, 0}; }
  static LogicalType tinyint(bool nullable = true) { return {TypeId::kTinyInt, nullable, 0, 0}; }
  static LogicalType smallint(bool nullable = true) { return {TypeId::kSmallInt, nullable, 0, 0}; }
  static LogicalType floatType(bool nullable = true) { return {TypeId::kFloat, nullable, 0, 0}; }
  static LogicalType doubleType(bool nullable = true) { return {TypeId::kDouble, nullable, 0, 0}; }
  static LogicalType date(bool nullable = true) { return {TypeId::kDate, nullable, 0, 0}; }
  static LogicalType time(int32_t p = 0, bool nullable = true) { return {TypeId::kTime, nullable, p, 0}; }
  static LogicalType decimal(int32_t p, int32_t s, bool nullable = true) { return {TypeId::kDecimal, nullable, p, s}; }
  static LogicalType string(bool nullable = true) { return {TypeId::kVarchar, nullable, kMaxVarcharLength, 0}; }
  static LogicalType varchar(int32_t n, bool nullable = true) { return {TypeId::kVarchar, nullable, n, 0}; }
  static LogicalType charType(int32_t n, bool nullable = true) { return {TypeId::kChar, nullable, n, 0}; }
  static LogicalType timestamp(int32_t p = 3, bool nullable = true) { return {TypeId::kTimestamp, nullable, p, 0}; }
  /// TIMESTAMP_LTZ(p): an instant, precision 0..9 (values are kept in milliseconds as for TIMESTAMP).
  static LogicalType timestampLtz(int32_t p = 3, bool nullable = true) { return {TypeId::kTimestampLtz, nullable, p, 0}; }
  static LogicalType intervalDayTime(bool nullable = true) { return {TypeId::kIntervalDayTime, nullable, 3, 0}; }
  /// Flink's ROW type (a structured row of named fields).
  static LogicalType row(RowType fields, bool nullable = true);

  LogicalType withNullable(bool n) const { LogicalType t = *this; t.nullable = n; return t; }
  bool isString() const { return id == TypeId::kVarchar || id == TypeId::kChar; }
  /// TIMESTAMP or TIMESTAMP_LTZ (Flink's TIMESTAMP family without TIMESTAMP WITH TIME ZONE).
  bool isTimestampFamily() const { return id == TypeId::kTimestamp || id == TypeId::kTimestampLtz; }
  /// BOOLEAN excluded; TINYINT, SMALLINT, INT, BIGINT, DECIMAL, FLOAT, DOUBLE.
  bool isNumeric() const { return isIntegral() || id == TypeId::kDecimal || isApproximate(); }
  /// TINYINT, SMALLINT, INT, BIGINT.
  bool isIntegral() const {
    return id == TypeId::kTinyInt || id == TypeId::kSmallInt || id == TypeId::kInt || id == TypeId::kBigInt;
  }
  /// FLOAT and DOUBLE (Flink's APPROXIMATE_NUMERIC): stored as double in a column.
  bool isApproximate() const { return id == TypeId::kFloat || id == TypeId::kDouble; }
  /// Stored as int64_t in a column (everything but FLOAT, DOUBLE, strings and ROW).
  bool isInt64Backed() const { return !isString() && !isApproximate() && id != TypeId::kRow; }
  /// Bits of an integral type (8, 16, 32, 64); 0 for the others.
  int integralBits() const {
    switch (id) {
      case TypeId::kTinyInt: return 8;
      case TypeId::kSmallInt: return 16;
      case TypeId::kInt: return 32;
      case TypeId::kBigInt: return 64;
      default: return 0;
    }
  }

  /// Flink's summary string: "INT", "BIGINT NOT NULL", "DECIMAL(10, 2)", "STRING", "VARCHAR(5)", "TIMESTAMP(3)",
  /// "TIMESTAMP_LTZ(3)",
  /// "ROW<`id` BIGINT, `name` STRING>".
  std::string toString() const;
  /// Same type ignoring nullability (of the type itself; a ROW's fields compare with theirs).
  bool sameRoot(const LogicalType& o) const {
    return id == o.id && precision == o.precision && scale == o.scale && (id != TypeId::kRow || sameFields(o));
  }
  bool operator==(const LogicalType& o) const { return sameRoot(o) && nullable == o.nullable; }

 private:
  bool sameFields(const LogicalType& o) const;
};

/// `v` wrapped to the range of an integral type the way Java's narrowing (byte)/(short)/(int) does;
/// other types return `v` unchanged.
inline int64_t wrapToType(const LogicalType& t, int64_t v) {
  switch (t.id) {
    case TypeId::kTinyInt: return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(v)));
    case TypeId::kSmallInt: return static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint64_t>(v)));
    case TypeId::kInt: return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    default: return v;
  }
}

/// `d` rounded to FLOAT for a FLOAT type (Java's (float) conversion), unchanged otherwise.
inline double roundToType(const LogicalType& t, double d) {
  return t.id == TypeId::kFloat ? static_cast<double>(static_cast<float>(d)) : d;
}

/// The schema of a row: field names and types, in order.
struct RowType {
  std::vector<std::string> names;
  std::vector<LogicalType> types;

  size_t size() const { return types.size(); }
  /// Index of a field by exact name, or -1.
  int indexOf(const std::string& name) const;
  /// "ROW<`a` INT, `b` STRING>"
  std::string toString() const;
};

}  // namespace sluice::types

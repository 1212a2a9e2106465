#include "types/logical_type.h"

#include <fmt/format.h>

namespace sluice::types {

std::string LogicalType::toString() const {
  std::string s;
  switch (id) {
    case TypeId::kNull: s = "NULL"; break;
    case TypeId::kBoolean: s = "BOOLEAN"; break;
    case TypeId::kInt: s = "INT"; break;
    case TypeId::kBigInt: s = "BIGINT"; break;
    case TypeId::kDouble: s = "DOUBLE"; break;
    case TypeId::kDecimal: s = fmt::format("DECIMAL({}, {})", precision, scale); break;
    case TypeId::kVarchar: s = precision == kMaxVarcharLength ? "STRING" : fmt::format("VARCHAR({})", precision); break;
    case TypeId::kChar: s = fmt::format("CHAR({})", precision); break;
    case TypeId::kTimestamp: s = fmt::format("TIMESTAMP({})", precision); break;
    case TypeId::kIntervalDayTime: s = "INTERVAL SECOND(3)"; break;
    case TypeId::kTinyInt: s = "TINYINT"; break;
    case TypeId::kSmallInt: s = "SMALLINT"; break;
    case TypeId::kFloat: s = "FLOAT"; break;
    case TypeId::kDate: s = "DATE"; break;
    case TypeId::kTime: s = fmt::format("TIME({})", precision); break;
    case TypeId::kTimestampLtz: s = fmt::format("TIMESTAMP_LTZ({})", precision); break;
    case TypeId::kRow: s = fields ? fields->toString() : "ROW<>"; break;
  }
  if (!nullable && id != TypeId::kNull) s += " NOT NULL";
  return s;
}

LogicalType LogicalType::row(RowType f, bool nullable) {
  LogicalType t{TypeId::kRow, nullable, 0, 0};
  t.fields = std::make_shared<const RowType>(std::move(f));
  return t;
}

bool LogicalType::sameFields(const LogicalType& o) const {
  if (!fields || !o.fields) return !fields && !o.fields;
  return fields->names == o.fields->names && fields->types == o.fields->types;
}

int RowType::indexOf(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  return -1;
}

std::string RowType::toString() const {
  std::string s = "ROW<";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) s += ", ";
    s += fmt::format("`{}` {}", i < names.size() ? names[i] : std::string(), types[i].toString());
  }
  return s + ">";
}

}  // namespace sluice::types

#include "table/planner/nested_fields.h"

namespace sluice::table {

namespace {
void flattenInto(const types::RowType& row, FlatField prefix, bool nullable, std::vector<FlatField>& out) {
  for (size_t i = 0; i < row.size(); ++i) {
    FlatField f = prefix;
    f.path.push_back(static_cast<int>(i));
    f.names.push_back(row.names[i]);
    const types::LogicalType& t = row.types[i];
    if (t.id == types::TypeId::kRow && t.fields) {
      flattenInto(*t.fields, std::move(f), nullable || t.nullable, out);
    } else {
      f.type = t;
      // A field of a NULL row is NULL: Flink types the access nullable.
      if (nullable) f.type.nullable = true;
      out.push_back(std::move(f));
    }
  }
}
}  // namespace

bool hasRowField(const types::RowType& row) {
  for (const auto& t : row.types)
    if (t.id == types::TypeId::kRow) return true;
  return false;
}

std::vector<FlatField> flattenFields(const types::RowType& row) {
  std::vector<FlatField> out;
  flattenInto(row, FlatField{}, false, out);
  return out;
}

std::string flatFieldName(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += '.';
    s += names[i];
  }
  return s;
}

}  // namespace sluice::table

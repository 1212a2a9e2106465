#pragma once
/// Nested fields of ROW columns (Flink's nested projection push-down, SupportsProjectionPushDown with
/// supportsNestedProjection): a source table's ROW columns are flattened into one scan column per leaf
/// field, so no ROW value flows through a batch. `t.col.field` and `col.field` name a leaf.

#include <string>
#include <vector>

#include "types/logical_type.h"

namespace sluice::table {

/// One scan column of a flattened physical row: a top-level field, or a leaf below ROW fields.
struct FlatField {
  std::vector<int> path;           ///< field indexes from the top-level column down (size 1: not nested)
  std::vector<std::string> names;  ///< the field names along `path`
  types::LogicalType type;         ///< the leaf's type, nullable when any ROW on the path is
};

/// True when a field of `row` is a ROW.
bool hasRowField(const types::RowType& row);

/// The leaves of `row` in field order, depth first (a field that is not a ROW is its own leaf).
std::vector<FlatField> flattenFields(const types::RowType& row);

/// "person.id" for names {"person", "id"}.
std::string flatFieldName(const std::vector<std::string>& names);

}  // namespace sluice::table

#pragma once
/// Implicit type rules the planner needs (Flink's LogicalTypeMerging / LogicalTypeCasts, the subset
/// of types supported so far).

#include <optional>

#include "types/logical_type.h"

namespace sluice::table {

/// The least restrictive common type (UNION ALL columns, CASE branches): INT < BIGINT < DECIMAL <
/// DOUBLE for numbers, CHAR/VARCHAR -> VARCHAR of the larger length (STRING), TIMESTAMP of the larger
/// precision, NULL adopts the other type. Nullable if either is. nullopt when there is none.
std::optional<types::LogicalType> leastRestrictive(const types::LogicalType& a, const types::LogicalType& b);

/// True when a value of `from` may be written into a column of type `to` with an implicit cast
/// (widening only: INT -> BIGINT/DECIMAL/DOUBLE, CHAR -> VARCHAR/STRING, NULL -> anything, ...).
bool canAssign(const types::LogicalType& from, const types::LogicalType& to);

}  // namespace sluice::table

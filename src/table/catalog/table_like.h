#pragma once
/// CREATE TABLE ... LIKE (FLIP-110): the derived table's definition merged with its base table's, as
/// Flink's MergeTableLikeUtil does it when the statement is converted.
///
/// Per feature, the strategy of the last option naming it (or ALL) wins; without options Flink's default
/// `INCLUDING ALL OVERWRITING OPTIONS`. The base table's physical columns always come first, in order,
/// then its computed / metadata columns unless GENERATED / METADATA is EXCLUDING, then the derived
/// table's columns. INCLUDING fails on a duplicate (a column, a watermark on the same column, a primary
/// key in both, an option key in both); OVERWRITING lets the derived table's entry replace the base's
/// (a computed column only another computed column, a metadata column only another metadata column);
/// EXCLUDING drops the base's. PARTITIONS: the base's PARTITIONED BY columns are kept unless EXCLUDING;
/// a derived PARTITIONED BY next to included base partitions is an error (Flink's message).

#include <string_view>

#include "table/sql/ast.h"

namespace sluice::table {

class Catalog;

/// Returns `derived` with its LIKE clause resolved against `catalog` (the result has no `like`).
/// Throws SqlError (at the clause's or the offending column's position in `script`) when the base table
/// does not exist or is a view, or on a duplicate the strategies do not allow.
sql::CreateTableStmt mergeTableLike(const sql::CreateTableStmt& derived, const Catalog& catalog,
                                    std::string_view script);

}  // namespace sluice::table

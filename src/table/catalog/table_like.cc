#include "table/catalog/table_like.h"

#include <fmt/format.h>

#include <array>

#include "table/catalog/catalog.h"
#include "table/sql/parser.h"

namespace sluice::table {
namespace {

using sql::LikeFeature;
using sql::LikeStrategy;

constexpr size_t kFeatures = 7;

struct Strategies {
  std::array<LikeStrategy, kFeatures> of{};
  LikeStrategy operator[](LikeFeature f) const { return of[static_cast<size_t>(f)]; }
};

Strategies strategiesOf(const sql::LikeClause& like) {
  Strategies s;
  s.of.fill(LikeStrategy::kIncluding);
  s.of[static_cast<size_t>(LikeFeature::kOptions)] = LikeStrategy::kOverwriting;
  for (const auto& o : like.options) {
    if (o.feature == LikeFeature::kAll) {
      s.of.fill(o.strategy);
    } else {
      s.of[static_cast<size_t>(o.feature)] = o.strategy;
    }
  }
  return s;
}

[[noreturn]] void fail(const std::string& message, std::string_view script, sql::SourcePos pos) {
  sql::throwSqlError(message, script, pos, "SQL validation error");
}

}  // namespace

sql::CreateTableStmt mergeTableLike(const sql::CreateTableStmt& derived, const Catalog& catalog,
                                    std::string_view script) {
  const sql::LikeClause& like = *derived.like;
  const CatalogTable* base_entry = catalog.findTable(like.source);
  if (base_entry == nullptr) {
    if (catalog.findView(like.source))
      fail(fmt::format("Source table '`default_catalog`.`default_database`.`{}`' of the LIKE clause can not be a VIEW",
                       Catalog::normalize(like.source)),
           script, like.pos);
    fail(fmt::format("Source table '`default_catalog`.`default_database`.`{}`' of the LIKE clause not found in the "
                     "catalog",
                     Catalog::normalize(like.source)),
         script, like.pos);
  }
  const sql::CreateTableStmt& base = *base_entry->definition;
  const Strategies strategy = strategiesOf(like);

  sql::CreateTableStmt out;
  out.name = derived.name;
  out.temporary = derived.temporary;
  out.if_not_exists = derived.if_not_exists;
  out.comment = derived.comment;

  // Columns: the base's (physical always; computed / metadata unless excluded), then the derived ones.
  for (const auto& c : base.columns) {
    if (c.kind == sql::ColumnKind::kComputed && strategy[LikeFeature::kGenerated] == LikeStrategy::kExcluding) continue;
    if (c.kind == sql::ColumnKind::kMetadata && strategy[LikeFeature::kMetadata] == LikeStrategy::kExcluding) continue;
    out.columns.push_back(c.clone());
  }
  for (const auto& c : derived.columns) {
    sql::ColumnDef* existing = nullptr;
    for (auto& o : out.columns)
      if (o.name == c.name) existing = &o;
    if (existing == nullptr) {
      out.columns.push_back(c.clone());
      continue;
    }
    if (c.kind == sql::ColumnKind::kPhysical || existing->kind == sql::ColumnKind::kPhysical) {
      if (c.kind != sql::ColumnKind::kPhysical && existing->kind == sql::ColumnKind::kPhysical)
        fail(fmt::format("A column named '{}' already exists in the base table. {} columns can only overwrite other "
                         "{} columns.",
                         c.name, c.kind == sql::ColumnKind::kComputed ? "Computed" : "Metadata",
                         c.kind == sql::ColumnKind::kComputed ? "computed" : "metadata"),
             script, c.pos);
      fail(fmt::format("A column named '{}' already exists in the base table.", c.name), script, c.pos);
    }
    const bool computed = existing->kind == sql::ColumnKind::kComputed;
    const LikeFeature feature = computed ? LikeFeature::kGenerated : LikeFeature::kMetadata;
    if (strategy[feature] != LikeStrategy::kOverwriting || existing->kind != c.kind)
      fail(fmt::format("A {} column named '{}' already exists in the base table. You might want to specify "
                       "EXCLUDING {} or OVERWRITING {}.",
                       computed ? "generated" : "metadata", c.name, computed ? "GENERATED" : "METADATA",
                       computed ? "GENERATED" : "METADATA"),
           script, c.pos);
    *existing = c.clone();
  }

  // Watermark: one per table here.
  const LikeStrategy wm = strategy[LikeFeature::kWatermarks];
  if (base.watermark && wm != LikeStrategy::kExcluding)
    out.watermark = base.watermark->clone();
  if (derived.watermark) {
    if (out.watermark && wm == LikeStrategy::kIncluding) {
      if (out.watermark->column == derived.watermark->column)
        fail(fmt::format("There already exists a watermark spec for column '{}' in the base table. You might want to "
                         "specify EXCLUDING WATERMARKS or OVERWRITING WATERMARKS.",
                         derived.watermark->column),
             script, derived.watermark->pos);
      fail("Multiple WATERMARK definitions are not supported (the base table has one: specify EXCLUDING WATERMARKS "
           "or OVERWRITING WATERMARKS)",
           script, derived.watermark->pos);
    }
    out.watermark = derived.watermark->clone();
  }

  // Primary key.
  if (!base.primary_key.empty() && strategy[LikeFeature::kConstraints] != LikeStrategy::kExcluding) {
    out.primary_key = base.primary_key;
    out.primary_key_pos = base.primary_key_pos;
  }
  if (!derived.primary_key.empty()) {
    if (!out.primary_key.empty())
      fail("The base table already has a primary key. You might want to specify EXCLUDING CONSTRAINTS.", script,
           derived.primary_key_pos);
    out.primary_key = derived.primary_key;
    out.primary_key_pos = derived.primary_key_pos;
  }

  // Partitions (Flink's MergeTableLikeUtil#mergePartitions): the base's unless EXCLUDING; both having
  // some is an error unless the base's are excluded.
  if (!base.partition_keys.empty() && strategy[LikeFeature::kPartitions] != LikeStrategy::kExcluding) {
    out.partition_keys = base.partition_keys;
    out.partition_key_pos = base.partition_key_pos;
  }
  if (!derived.partition_keys.empty()) {
    if (!out.partition_keys.empty())
      fail("The base table already has partitions defined. You might want to specify EXCLUDING PARTITIONS.", script,
           derived.partition_key_pos.front());
    out.partition_keys = derived.partition_keys;
    out.partition_key_pos = derived.partition_key_pos;
  }

  // Options, in the base's order, the derived ones after (an overwritten key keeps its place).
  const LikeStrategy opts = strategy[LikeFeature::kOptions];
  if (opts != LikeStrategy::kExcluding) out.options = base.options;
  for (const auto& o : derived.options) {
    sql::TableOption* existing = nullptr;
    for (auto& e : out.options)
      if (e.key == o.key) existing = &e;
    if (existing == nullptr) {
      out.options.push_back(o);
    } else if (opts == LikeStrategy::kOverwriting) {
      *existing = o;
    } else {
      fail(fmt::format("There already exists an option ['{}' -> '{}']  in the base table. You might want to specify "
                       "EXCLUDING OPTIONS or OVERWRITING OPTIONS.",
                       existing->key, existing->value),
           script, o.pos);
    }
  }
  return out;
}

}  // namespace sluice::table

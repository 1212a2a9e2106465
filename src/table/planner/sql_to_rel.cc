#include "table/planner/sql_to_rel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/config.h"
#include "table/functions/time_zone.h"
#include "common/error.h"
#include "table/planner/nested_fields.h"
#include "table/planner/sql_to_rel_internal.h"
#include "table/planner/type_coercion.h"
#include "table/runtime/watermark_assigner.h"
#include "table/runtime/window_table_function.h"
#include "types/value_format.h"

namespace sluice::table {

namespace {
// Flink's ExecutionConfigOptions.TABLE_EXEC_SOURCE_CDC_EVENTS_DUPLICATE.
const ConfigOption<bool> kCdcEventsDuplicate(
    "table.exec.source.cdc-events-duplicate", ConfigType::kBool, "false",
    "Whether the changelog sources (e.g. debezium-json) may deliver duplicate events. When true the planner puts a "
    "ChangelogNormalize, keyed by the table's primary key (required), after them to drop the duplicates.");
}  // namespace

bool SqlToRelConverter::Impl::batch() const { return config.get(options::kRuntimeMode) == "BATCH"; }

RelNodePtr SqlToRelConverter::Impl::makeCalc(const RelNodePtr& input, ExprPtr condition,
                                             std::vector<ExprPtr> projections, std::vector<std::string> names) {
  RelNodePtr in = input;
  // Row time attributes computed by an inner Calc (a group window's *_ROWTIME) stay attributes when it merges.
  std::vector<bool> kept_rowtime(projections.size(), false);
  // A Calc over a scan is pushed into it (projection/filter push-down): it runs in the source
  // block, at the source's parallelism, before any exchange.
  bool fused_into_source_block = input->in_source_block;
  // A Calc right above a Rank still waiting for its range always fuses, so the filter on the rank reaches it.
  const bool over_pending_rank =
      in->kind == RelKind::kCalc && in->inputs[0]->kind == RelKind::kRank && in->inputs[0]->rank.rank_end < 0;
  if (in->kind == RelKind::kCalc && (over_pending_rank || isMergeable(*in, projections, condition))) {
    for (size_t i = 0; i < projections.size(); ++i)
      kept_rowtime[i] = projections[i]->kind == ExprKind::kInputRef &&
                        in->rowtime[static_cast<size_t>(projections[i]->input_index)];
    for (auto& p : projections) p = substitute(p, in->projections);
    if (condition) condition = substitute(condition, in->projections);
    if (in->condition) {
      condition = condition ? makeCall(ScalarOp::kAnd, {in->condition, condition}) : in->condition;
    }
    in = in->inputs[0];
  }
  if (!condition && isIdentity(projections, in->row_type.size())) {
    // A pure rename: keep the input, relabel.
    auto copy = std::make_shared<RelNode>(*in);
    copy->row_type.names = std::move(names);
    return copy;
  }
  auto rel = std::make_shared<RelNode>();
  rel->kind = RelKind::kCalc;
  rel->inputs = {in};
  rel->condition = std::move(condition);
  rel->parallelism = -1;
  for (size_t i = 0; i < projections.size(); ++i) {
    rel->row_type.names.push_back(names[i]);
    rel->row_type.types.push_back(projections[i]->type);
    bool rt = kept_rowtime[i] || (projections[i]->kind == ExprKind::kInputRef &&
                                  in->rowtime[static_cast<size_t>(projections[i]->input_index)]);
    rel->rowtime.push_back(rt);
  }
  rel->projections = std::move(projections);
  rel->changelog = in->changelog;
  if (fused_into_source_block) {
    rel->in_source_block = true;
    rel->parallelism = in->parallelism;
  }
  if (rel->condition && in->kind == RelKind::kRank && in->rank.rank_end < 0) return pushRankRange(rel);
  return rel;
}

RelNodePtr SqlToRelConverter::Impl::sourceBlock(RelNodePtr rel, int parallelism) {
  if (rel->kind != RelKind::kCalc || rel->in_source_block) return rel;
  auto copy = std::make_shared<RelNode>(*rel);
  copy->in_source_block = true;
  copy->parallelism = parallelism;
  return copy;
}

SqlToRelConverter::Impl::TableSchema SqlToRelConverter::Impl::resolveSchema(const sql::CreateTableStmt& def,
                                                                            const std::string& name,
                                                                            const std::string& qualifier) const {
  TableSchema out;
  ResolvedTable& resolved = out.resolved;
  resolved.name = name;
  for (const auto& o : def.options) resolved.options[o.key] = o.value;
  std::vector<int> physical_of_column(def.columns.size(), -1);
  std::vector<int> metadata_of_column(def.columns.size(), -1);
  for (size_t i = 0; i < def.columns.size(); ++i) {
    const auto& c = def.columns[i];
    if (c.kind == sql::ColumnKind::kMetadata) {
      metadata_of_column[i] = static_cast<int>(resolved.metadata.size());
      resolved.metadata.push_back(MetadataColumn{c.name, c.metadata_key.value_or(c.name), c.type, c.metadata_virtual});
    }
    for (size_t j = 0; j < i; ++j)
      if (def.columns[j].name == c.name) fail(c.pos, fmt::format("Column '{}' is defined twice", c.name));
    if (c.kind == sql::ColumnKind::kPhysical) {
      physical_of_column[i] = static_cast<int>(resolved.physical_type.size());
      resolved.physical_type.names.push_back(c.name);
      resolved.physical_type.types.push_back(c.type);
    }
  }
  for (const auto& k : def.primary_key) {
    int idx = resolved.physical_type.indexOf(k);
    if (idx < 0) fail(def.primary_key_pos, fmt::format("Primary key column '{}' is not a physical column", k));
    resolved.primary_key.push_back(idx);
    resolved.physical_type.types[static_cast<size_t>(idx)].nullable = false;
  }
  // PARTITIONED BY (Flink's SqlCreateTableConverter#verifyPartitioningColumnsExist): every key a column of
  // the table; here also a physical one (the filesystem connector keeps partition values in directory names).
  for (size_t k = 0; k < def.partition_keys.size(); ++k) {
    const std::string& key = def.partition_keys[k];
    const sql::SourcePos at = k < def.partition_key_pos.size() ? def.partition_key_pos[k] : sql::SourcePos{};
    for (size_t j = 0; j < k; ++j)
      if (def.partition_keys[j] == key) fail(at, fmt::format("Partition column '{}' is listed twice", key));
    const sql::ColumnDef* col = nullptr;
    for (const auto& c : def.columns)
      if (c.name == key) col = &c;
    if (col == nullptr) {
      std::vector<std::string> names;
      for (const auto& c : def.columns) names.push_back("'" + c.name + "'");
      fail(at, fmt::format("Partition column '{}' not defined in the table schema. Available columns: [{}]", key,
                           fmt::join(names, ", ")));
    }
    if (col->kind != sql::ColumnKind::kPhysical)
      fail(at, fmt::format("Partition column '{}' is a {} column; partition columns must be physical columns", key,
                           col->kind == sql::ColumnKind::kComputed ? "computed" : "metadata"));
    resolved.partition_keys.push_back(resolved.physical_type.indexOf(key));
  }
  out.has_computed = physical_of_column.size() != resolved.physical_type.size();
  // The scan produces the physical fields (ROW columns flattened into their leaves, nested_fields.h),
  // then the metadata columns (Flink's SupportsReadingMetadata).
  const std::vector<FlatField> flat = flattenFields(resolved.physical_type);
  std::vector<int> first_flat(resolved.physical_type.size(), 0);
  for (size_t k = flat.size(); k-- > 0;) first_flat[static_cast<size_t>(flat[k].path[0])] = static_cast<int>(k);
  const bool nested = hasRowField(resolved.physical_type);
  for (const auto& f : flat) {
    out.scan_physical.names.push_back(flatFieldName(f.names));
    out.scan_physical.types.push_back(f.type);
    if (nested) out.nested_paths.push_back(f.path);
  }
  const int num_physical = static_cast<int>(flat.size());
  // Scope columns of physical field j (over scan columns, or output columns from `at`): a ROW field is
  // refused whole and resolves its leaves by path.
  auto physicalScope = [&](size_t j, int at, std::vector<ScopeColumn>& cols,
                           std::vector<ExprPtr>* refs, std::vector<std::string>* names) {
    const std::string& col = resolved.physical_type.names[j];
    const LogicalType& type = resolved.physical_type.types[j];
    if (type.id != TypeId::kRow) {
      cols.push_back({qualifier, col, at, type, false, false, {}, false});
      if (refs) refs->push_back(makeInputRef(first_flat[j], type));
      if (names) names->push_back(col);
      return;
    }
    cols.push_back({qualifier, col, -1, type, false, false, {}, true});
    for (size_t k = static_cast<size_t>(first_flat[j]); k < flat.size() && flat[k].path[0] == static_cast<int>(j); ++k) {
      cols.push_back({qualifier, col, at++, flat[k].type, false, false,
                      std::vector<std::string>(flat[k].names.begin() + 1, flat[k].names.end()), false});
      if (refs) refs->push_back(makeInputRef(static_cast<int>(k), flat[k].type));
      if (names) names->push_back(flatFieldName(flat[k].names));
    }
  };
  Scope physical_scope;
  for (size_t j = 0; j < resolved.physical_type.size(); ++j)
    physicalScope(j, first_flat[j], physical_scope.columns, nullptr, nullptr);
  for (size_t k = 0; k < resolved.metadata.size(); ++k)
    physical_scope.columns.push_back({qualifier, resolved.metadata[k].name, num_physical + static_cast<int>(k),
                                      resolved.metadata[k].type, false, false});
  if (out.has_computed || def.watermark) {
    for (size_t i = 0; i < def.columns.size(); ++i) {
      const auto& c = def.columns[i];
      const int at = static_cast<int>(out.projections.size());
      if (c.kind == sql::ColumnKind::kPhysical) {
        physicalScope(static_cast<size_t>(physical_of_column[i]), at, out.scope, &out.projections, &out.names);
        continue;
      }
      out.names.push_back(c.name);
      if (c.kind == sql::ColumnKind::kMetadata) {
        out.projections.push_back(makeInputRef(num_physical + metadata_of_column[i], c.type));
      } else {
        if (const sql::Expr* a = findAggregate(*c.expr))
          fail(a->pos, "Aggregate functions are not allowed in computed columns");
        out.projections.push_back(convert(*c.expr, physical_scope));
      }
      out.scope.push_back({qualifier, c.name, at, out.projections.back()->type, false, false});
    }
  } else {
    out.scope = physical_scope.columns;
  }
  if (def.watermark) {
    const auto& wm = *def.watermark;
    for (const auto& c : out.scope)
      if (c.nested.empty() && !c.row_value && c.name == wm.column) out.rowtime = c.index;
    if (out.rowtime < 0)
      fail(wm.pos, fmt::format("The rowtime attribute field '{}' is not defined in the table schema", wm.column));
    const LogicalType& rt_type = out.projections[static_cast<size_t>(out.rowtime)]->type;
    if (!rt_type.isTimestampFamily() || rt_type.precision > 3)
      fail(wm.pos, fmt::format("Invalid data type of time field for watermark definition. The field must be of type "
                               "TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, but "
                               "the time field type is {}",
                               rt_type.toString()));
    Scope table_scope;
    table_scope.columns = out.scope;
    out.watermark = convert(*wm.expr, table_scope);
    if (!out.watermark->type.isTimestampFamily())
      fail(wm.expr->pos, fmt::format("Watermark strategy {} must be of type TIMESTAMP but is of type '{}'",
                                     wm.expr->toString(), out.watermark->type.toString()));
  }
  return out;
}

FromResult SqlToRelConverter::Impl::convertTable(const CatalogTable& table, const std::string& qualifier,
                                                 sql::SourcePos pos) {
  const sql::CreateTableStmt& def = *table.definition;
  TableSchema schema = resolveSchema(def, table.name, qualifier);
  const ResolvedTable& resolved = schema.resolved;
  std::shared_ptr<ScanTableSource> source;
  try {
    const DynamicTableFactory& f = factories.find(resolved);
    source = f.createSource(resolved, config);
  } catch (const SqlError&) {
    throw;
  } catch (const UserError& err) {
    fail(pos, fmt::format("Unable to create a source for reading table 'default_catalog.default_database.{}'.\n\n{}",
                          table.name, err.what()));
  }
  auto scan = std::make_shared<RelNode>();
  scan->kind = RelKind::kTableSourceScan;
  scan->row_type = schema.scan_physical;
  if (!schema.nested_paths.empty()) {
    // ROW values do not flow through batches: the source must produce the flattened fields.
    if (!source->applyNestedProjection(schema.nested_paths))
      fail(pos,
           fmt::format("ROW values are not supported yet: the connector '{}' of table '{}' cannot produce the fields "
                       "of a ROW column as flat columns (nested projection push-down)",
                       resolved.options.count("connector") ? resolved.options.at("connector") : "", table.name));
    scan->nested_paths = schema.nested_paths;
  }
  if (!resolved.metadata.empty()) {
    const auto readable = source->listReadableMetadata();
    for (const auto& m : resolved.metadata) {
      if (readable.count(m.key) == 0) {
        std::string keys;
        for (const auto& kv : readable) keys += "\n" + kv.first;
        const sql::ColumnDef* col = nullptr;
        for (const auto& c : def.columns)
          if (c.name == m.name) col = &c;
        fail(col != nullptr ? col->pos : pos,
             fmt::format("Invalid metadata key '{}' in column '{}' of table 'default_catalog.default_database.{}'. "
                         "The connector '{}' supports the following metadata keys for reading:{}",
                         m.key, m.name, table.name, resolved.options.count("connector") ? resolved.options.at("connector") : "",
                         keys.empty() ? " (none)" : keys));
      }
      scan->row_type.names.push_back(m.name);
      scan->row_type.types.push_back(m.type);
    }
    try {
      source->applyReadableMetadata(resolved.metadata);
    } catch (const SqlError&) {
      throw;
    } catch (const UserError& err) {
      fail(pos, err.what());
    }
  }
  scan->rowtime.assign(scan->row_type.size(), false);
  scan->table_name = table.name;
  scan->source = source;
  scan->parallelism = source->parallelism().value_or(-1);
  scan->changelog = source->changelogMode();
  if (batch()) {
    // Flink's DynamicSourceUtils.validateScanSourceForBatch.
    if (!source->isBounded())
      fail(pos, fmt::format("Querying an unbounded table 'default_catalog.default_database.{}' in batch mode is not "
                            "allowed. The table source is unbounded.",
                            table.name));
    if (scan->producesUpdates())
      fail(pos, fmt::format("Querying a table in batch mode is currently only possible for INSERT-only table sources. "
                            "But the source for table 'default_catalog.default_database.{}' produces other changelog "
                            "messages than just INSERT.",
                            table.name));
  }
  for (int k : resolved.primary_key) {
    // Primary key columns index the scan row (a ROW column before one shifts it).
    int at = 0;
    for (int j = 0; j < k; ++j) {
      const LogicalType& t = resolved.physical_type.types[static_cast<size_t>(j)];
      at += t.id == TypeId::kRow ? static_cast<int>(flattenFields(RowType{{""}, {t}}).size()) : 1;
    }
    if (resolved.physical_type.types[static_cast<size_t>(k)].id == TypeId::kRow)
      fail(def.primary_key_pos, "ROW values are not supported yet: a ROW column cannot be a primary key");
    scan->primary_key.push_back(at);
  }
  // FLIP-367: a changelog source with its own parallelism is hashed on its primary key right after
  // the scan, so every change of a key reaches one subtask in order; nothing is pushed into it.
  const bool changelog_source = scan->producesUpdates();
  scan->in_source_block = !changelog_source;
  if (changelog_source && scan->parallelism > 0 && resolved.primary_key.empty())
    fail(pos, fmt::format("Configured parallelism {} for upsert table 'default_catalog.default_database.{}' while "
                          "can not find primary key field. This is a bug, please file an issue.",
                          scan->parallelism, table.name));
  RelNodePtr rel = scan;
  // Flink's FlinkChangelogModeInferenceProgram: upsert sources, and retract (CDC) sources whose events may
  // be duplicated, are normalized by a ChangelogNormalize keyed by the primary key.
  const bool normalize = scan->changelog == ChangelogMode::kUpsert ||
                         (scan->changelog == ChangelogMode::kAll && config.get(kCdcEventsDuplicate));
  if (normalize) {
    if (resolved.primary_key.empty())
      fail(pos, fmt::format("Configuration '{}' is enabled which requires the changelog sources to define a PRIMARY "
                            "KEY. However, table 'default_catalog.default_database.{}' doesn't have a primary key.",
                            kCdcEventsDuplicate.key(), table.name));
    auto norm = std::make_shared<RelNode>();
    norm->kind = RelKind::kChangelogNormalize;
    norm->inputs = {scan};
    norm->row_type = scan->row_type;
    norm->rowtime = scan->rowtime;
    norm->group_keys = scan->primary_key;
    norm->changelog = ChangelogMode::kAll;
    rel = norm;
  }
  auto block = [&](RelNodePtr r) { return changelog_source ? r : sourceBlock(std::move(r), scan->parallelism); };

  const std::vector<ExprPtr>& projections = schema.projections;
  const std::vector<std::string>& names = schema.names;
  const bool has_computed = schema.has_computed;
  // Watermark push-down (Flink's PushWatermarkIntoTableSourceScanRule; below a ChangelogNormalize too,
  // FLINK-19878): a source that reads splits side by side keeps a watermark per split.
  bool watermark_pushed = false;
  if (def.watermark && batch()) {
    // BATCH: no watermarks (Flink's batch planner drops the WatermarkAssigner); the row time stays a time
    // attribute for windows, which fire at the end of input over every row (nothing is late).
    watermark_pushed = true;
  } else if (def.watermark) {
    const ExprPtr rowtime_expr = schema.projections[static_cast<size_t>(schema.rowtime)];
    const ExprPtr wm_expr = substitute(schema.watermark, schema.projections);
    watermark_pushed =
        source->applyWatermark(std::make_shared<RowtimeWatermarkGenerator>(scan->row_type, rowtime_expr, wm_expr));
    if (watermark_pushed) scan->watermark_expr = wm_expr;
  }
  if (watermark_pushed) {
    auto with_rowtime = std::make_shared<RelNode>(*block(makeCalc(rel, nullptr, projections, names)));
    with_rowtime->rowtime[static_cast<size_t>(schema.rowtime)] = true;
    rel = with_rowtime;
  } else if (def.watermark) {
    const int rt = schema.rowtime;
    const ExprPtr& wm_expr = schema.watermark;
    // Computed columns first, then the watermark expression over them (two Calcs unless fusing
    // would evaluate a computed column twice).
    rel = block(makeCalc(rel, nullptr, projections, names));
    std::vector<ExprPtr> with_wm;
    for (size_t i = 0; i < projections.size(); ++i)
      with_wm.push_back(makeInputRef(static_cast<int>(i), projections[i]->type));
    with_wm.push_back(wm_expr);
    std::vector<std::string> wm_names = names;
    wm_names.push_back("$watermark");
    rel = block(makeCalc(rel, nullptr, with_wm, wm_names));
    auto assigner = std::make_shared<RelNode>();
    assigner->kind = RelKind::kWatermarkAssigner;
    assigner->inputs = {rel};
    // The operator drops the watermark column again: its output is the table's columns.
    assigner->row_type.names = names;
    for (const auto& p : projections) assigner->row_type.types.push_back(p->type);
    assigner->rowtime.assign(names.size(), false);
    assigner->rowtime[static_cast<size_t>(rt)] = true;
    assigner->rowtime_index = rt;
    assigner->watermark_index = static_cast<int>(with_wm.size() - 1);
    assigner->watermark_expr = wm_expr;
    assigner->changelog = rel->changelog;
    assigner->parallelism = changelog_source ? -1 : scan->parallelism;
    assigner->in_source_block = !changelog_source;
    rel = assigner;
  } else if (has_computed) {
    rel = block(makeCalc(rel, nullptr, projections, names));
  }
  FromResult out;
  out.rel = rel;
  out.scope.columns = schema.scope;
  for (auto& c : out.scope.columns)
    if (c.index >= 0) c.rowtime = rel->rowtime[static_cast<size_t>(c.index)];
  return out;
}

FromResult SqlToRelConverter::Impl::convertNamed(const sql::QualifiedName& name,
                                                 const std::optional<std::string>& alias, sql::SourcePos pos) {
  std::string qualifier = alias ? *alias : name.back();
  size_t visible = 0;
  if (const sql::WithItem* w = findWithItem(name, visible)) return fromRel(convertWithItem(*w, visible, pos), qualifier);
  if (const CatalogTable* t = catalog.findTable(name)) return convertTable(*t, qualifier, pos);
  if (const CatalogView* v = catalog.findView(name)) {
    if (++view_depth > 64) fail(pos, "Views nest too deeply");
    RelNodePtr rel = convertQueryRel(*v->definition->query);
    --view_depth;
    if (!v->definition->column_names.empty()) {
      if (v->definition->column_names.size() != rel->row_type.size())
        fail(pos, fmt::format("View '{}' declares {} columns but its query has {}", v->name,
                              v->definition->column_names.size(), rel->row_type.size()));
      auto copy = std::make_shared<RelNode>(*rel);
      copy->row_type.names = v->definition->column_names;
      rel = copy;
    }
    return fromRel(rel, qualifier);
  }
  std::vector<std::string> names = catalog.names();
  std::string close = closestConfigKey(Catalog::normalize(name), names);
  fail(pos, fmt::format("Object '{}' not found{}", sql::qualifiedNameToString(name),
                        close.empty() ? "" : fmt::format("; did you mean '{}'?", close)));
}

FromResult SqlToRelConverter::Impl::fromRel(const RelNodePtr& rel, const std::string& qualifier) {
  FromResult out;
  out.rel = rel;
  for (size_t i = 0; i < rel->row_type.size(); ++i)
    out.scope.columns.push_back(
        {qualifier, rel->row_type.names[i], static_cast<int>(i), rel->row_type.types[i], rel->rowtime[i], false});
  return out;
}

FromResult SqlToRelConverter::Impl::convertWindowTvf(const sql::TableRef& ref) {
  const sql::Expr& c = *ref.call;
  if (c.name != "TUMBLE" && c.name != "HOP" && c.name != "CUMULATE" && c.name != "SESSION")
    fail(c.pos, fmt::format("Table function {} is not supported; supported window functions are TUMBLE, HOP, "
                            "CUMULATE and SESSION",
                            c.name));
  const bool session = c.name == "SESSION";
  size_t want = c.name == "TUMBLE" || session ? 3 : 4;
  // SESSION takes no offset.
  if (c.children.size() != want && (session || c.children.size() != want + 1))
    fail(c.pos, fmt::format("Invalid number of arguments to function '{}'. Was expecting {} arguments", c.name, want));
  if (c.children[0]->kind != sql::ExprKind::kTableArg)
    fail(c.children[0]->pos, fmt::format("The first argument of {} must be TABLE t", c.name));
  if (c.children[1]->kind != sql::ExprKind::kDescriptor || c.children[1]->names.size() != 1)
    fail(c.children[1]->pos, fmt::format("The second argument of {} must be DESCRIPTOR(time_column)", c.name));
  const sql::Expr& table_arg = *c.children[0];
  // TABLE (query) reads its subquery; the window's columns are then qualified by the alias only.
  const std::string table_name = table_arg.subquery ? "(subquery)" : sql::qualifiedNameToString(table_arg.names);
  FromResult in = table_arg.subquery ? fromRel(convertQueryRel(*table_arg.subquery), "")
                                     : convertNamed(table_arg.names, std::nullopt, table_arg.pos);
  // PARTITION BY: only SESSION's table argument has set semantics (Calcite's SqlValidatorImpl check).
  if (!session && !table_arg.children.empty())
    fail(table_arg.children[0]->pos,
         fmt::format("Only tables with set semantics may be partitioned. Invalid PARTITION BY clause in the 0-th "
                     "operand of table function '{}'",
                     c.name));
  auto findColumn = [&](const std::string& name) -> const ScopeColumn* {
    const ScopeColumn* found = nullptr;
    for (const auto& sc : in.scope.columns)
      if (sc.name == name && sc.nested.empty() && !sc.row_value && sc.index >= 0) found = &sc;
    return found;
  };
  std::vector<int> partition_keys;
  for (const auto& k : table_arg.children) {
    const ScopeColumn* kc = k->names.size() == 1 ? findColumn(k->names[0]) : nullptr;
    if (kc == nullptr)
      fail(k->pos, fmt::format("Column '{}' not found in table '{}'", sql::qualifiedNameToString(k->names), table_name));
    partition_keys.push_back(kc->index);
  }
  const std::string& col = c.children[1]->names[0];
  const ScopeColumn* tc = nullptr;
  for (const auto& sc : in.scope.columns)
    if (sc.name == col && sc.nested.empty() && !sc.row_value) tc = &sc;
  if (tc == nullptr)
    fail(c.children[1]->pos,
         fmt::format("Column '{}' not found in table '{}'", col, table_name));
  // A PROCTIME() column is a processing-time attribute: the windows follow the operator's clock.
  const bool proctime = !tc->rowtime && tc->index >= 0 && isProctimeAttribute(*in.rel, tc->index);
  if (!tc->rowtime && !proctime)
    fail(c.children[1]->pos,
         fmt::format("The window function requires the timecol is a time attribute type, but is {}.",
                     tc->type.toString()));
  if (proctime && batch())
    fail(c.children[1]->pos, "Window can not be defined over a proctime attribute column for batch mode");
  if (proctime && session)
    fail(c.children[1]->pos, "SESSION windows on a processing-time attribute are not supported yet");
  auto interval = [&](size_t i) {
    const sql::Expr& e = *c.children[i];
    if (e.kind != sql::ExprKind::kLiteral || e.literal_kind != sql::LiteralKind::kInterval)
      fail(e.pos, fmt::format("{} expects an INTERVAL literal here", c.name));
    int64_t ms = sql::intervalMillis(e);
    if (ms <= 0) fail(e.pos, fmt::format("{} requires a positive interval", c.name));
    return ms;
  };
  // The optional offset (Flink 1.15+): an INTERVAL literal, negative allowed (INTERVAL '-1' MINUTE).
  auto offsetArg = [&](const sql::Expr& e) {
    if (e.kind != sql::ExprKind::kLiteral || e.literal_kind != sql::LiteralKind::kInterval)
      fail(e.pos, fmt::format("{} expects an INTERVAL literal as its offset", c.name));
    return sql::intervalMillis(e);
  };
  FromResult out = in;
  out.windowed = true;
  out.window_pos = c.pos;
  out.window.time_index = tc->index;
  out.window.proctime = proctime;
  // FLIP-162: windows over a TIMESTAMP_LTZ time attribute align on the session zone's wall clock.
  if (tc->type.id == TypeId::kTimestampLtz) out.window.time_zone = config.get(options::kLocalTimeZone);
  if (session) {
    // SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap): SessionWindowSpec.
    out.window.kind = WindowSpec::Kind::kSession;
    out.window.size_ms = interval(2);
    out.window.partition_keys = partition_keys;
  } else if (c.name == "TUMBLE") {
    out.window.kind = WindowSpec::Kind::kTumble;
    out.window.size_ms = interval(2);
    out.window.slide_ms = out.window.size_ms;
    if (c.children.size() == 4) out.window.offset_ms = offsetArg(*c.children[3]);
    if (out.window.offset_ms <= -out.window.size_ms || out.window.offset_ms >= out.window.size_ms)
      fail(c.children[3]->pos,
           fmt::format("TUMBLE window parameters must satisfy abs(offset) < size, but got size {} ms and offset {} ms.",
                       out.window.size_ms, out.window.offset_ms));
  } else {
    // HOP(slide, size [, offset]) and CUMULATE(step, max size [, offset]).
    const bool hop = c.name == "HOP";
    out.window.kind = hop ? WindowSpec::Kind::kHop : WindowSpec::Kind::kCumulate;
    out.window.slide_ms = interval(2);
    out.window.size_ms = interval(3);
    if (c.children.size() == 5) out.window.offset_ms = offsetArg(*c.children[4]);
    if (out.window.size_ms % out.window.slide_ms != 0)
      fail(c.pos, hop ? fmt::format("HOP table function based aggregate requires size must be an integral multiple of "
                                    "slide, but got size {} ms and slide {} ms.",
                                    out.window.size_ms, out.window.slide_ms)
                      : fmt::format("CUMULATE table function based aggregate requires maxSize must be an integral "
                                    "multiple of step, but got maxSize {} ms and step {} ms.",
                                    out.window.size_ms, out.window.slide_ms));
  }
  std::string q = ref.alias ? *ref.alias : table_arg.subquery ? "" : table_arg.names.back();
  for (auto& sc : out.scope.columns) sc.qualifier = q;
  for (const char* n : {"window_start", "window_end", "window_time"}) {
    // window_time of an LTZ window is the instant of its last wall-clock millisecond (TIMESTAMP_LTZ(3)).
    const bool ltz = std::string_view(n) == "window_time" && !out.window.time_zone.empty();
    out.scope.columns.push_back(
        {q, n, -1, ltz ? LogicalType::timestampLtz(3, false) : LogicalType::timestamp(3, false), false, true});
  }
  return out;
}

FromResult SqlToRelConverter::Impl::windowTableFunction(const FromResult& from) {
  // Flink's StreamPhysicalWindowTableFunction: insert-only input; SESSION only under a window aggregation here.
  if (from.window.kind == WindowSpec::Kind::kSession)
    fail(from.window_pos, "A SESSION window table function is only supported with a GROUP BY window_start, "
                          "window_end aggregation yet");
  if (from.window.proctime)
    fail(from.window_pos, "A window table function over a processing-time attribute is only supported with a GROUP "
                          "BY window_start, window_end aggregation yet");
  if (from.rel->producesUpdates())
    fail(from.window_pos, fmt::format("StreamPhysicalWindowTableFunction doesn't support consuming update and delete "
                                      "changes which is produced by node {}",
                                      from.rel->describe()));
  auto tvf = std::make_shared<RelNode>();
  tvf->kind = RelKind::kWindowTableFunction;
  tvf->inputs = {from.rel};
  tvf->window = from.window;
  tvf->row_type = WindowTableFunctionOperator::outputType(from.rel->row_type, from.window);
  tvf->rowtime = from.rel->rowtime;
  tvf->rowtime.insert(tvf->rowtime.end(), {false, false, true});  // window_time is the output's row time
  tvf->changelog = ChangelogMode::kInsertOnly;
  FromResult out = from;
  out.rel = tvf;
  out.windowed = false;
  const int width = static_cast<int>(from.rel->row_type.size());
  for (auto& c : out.scope.columns) {
    if (!c.window_property) continue;
    c.window_property = false;
    c.index = c.name == "window_start" ? width : c.name == "window_end" ? width + 1 : width + 2;
    c.rowtime = c.name == "window_time";
  }
  return out;
}

FromResult SqlToRelConverter::Impl::convertFrom(const sql::TableRef& ref) {
  FromResult out;
  switch (ref.kind) {
    case sql::TableRefKind::kNamed:
      if (ref.system_time)
        fail(ref.system_time_pos, "FOR SYSTEM_TIME AS OF is only supported on the right side of a join (a lookup or "
                                  "temporal join)");
      out = convertNamed(ref.name, ref.alias, ref.pos);
      break;
    case sql::TableRefKind::kSubquery:
      out = fromRel(convertQueryRel(*ref.subquery), ref.alias ? *ref.alias : "");
      break;
    case sql::TableRefKind::kTableFunction:
      out = convertWindowTvf(ref);
      break;
    case sql::TableRefKind::kJoin: {
      ExprPtr no_where;
      return convertJoinFrom(ref, {}, no_where);
    }
    case sql::TableRefKind::kLateral:
      fail(ref.pos, "LATERAL TABLE needs a table to its left: FROM t, LATERAL TABLE(...)");
  }
  applyColumnAliases(out, ref);
  return out;
}

std::string SqlToRelConverter::Impl::itemName(const sql::SelectItem& item, size_t position) {
  if (item.alias) return *item.alias;
  if (item.expr && item.expr->kind == sql::ExprKind::kIdentifier) return item.expr->names.back();
  return "EXPR$" + std::to_string(position);
}

void SqlToRelConverter::Impl::checkBoolean(const ExprPtr& e, const sql::Expr& at, const char* clause) const {
  if (e->type.id != TypeId::kBoolean && e->type.id != TypeId::kNull)
    fail(at.pos, fmt::format("{} clause must be a condition, but is of type {}", clause, e->type.toString()));
}

RelNodePtr SqlToRelConverter::Impl::convertSelect(const sql::SelectStmt& s) {
  if (!s.values.empty()) return convertValues(s);
  if (s.set_op) return convertSetOperation(s);
  if (s.distinct) {
    // SELECT DISTINCT over a GROUP BY, aggregates or `*` is a distinct over the plain SELECT.
    bool wrap = !s.group_by.empty() || s.having != nullptr;
    for (const auto& item : s.select_list) wrap = wrap || item.is_star || containsAggregate(*item.expr);
    if (wrap && !(s.from && s.from->kind == sql::TableRefKind::kTableFunction)) {
      sql::SelectStmt plain = s.clone();
      plain.distinct = false;
      return distinctOver(convertSelect(plain));
    }
  }
  if (s.where)
    if (const sql::Expr* a = findAggregate(*s.where))
      fail(a->pos, containsOverWindow(*s.where) ? "Windowed aggregate expression is illegal in WHERE clause"
                                                : "Aggregate functions are not allowed in WHERE");
  // WHERE conjuncts x [NOT] IN (SELECT ...) and [NOT] EXISTS (...) become semi / anti joins (sql_to_rel_join.cc).
  std::vector<const sql::Expr*> conjuncts, in_subqueries;
  std::function<void(const sql::Expr&)> split = [&](const sql::Expr& e) {
    if (e.kind == sql::ExprKind::kBinary && e.binary_op == sql::BinaryOp::kAnd) {
      split(*e.children[0]);
      split(*e.children[1]);
    } else {
      const bool subquery = (e.kind == sql::ExprKind::kIn && e.subquery) || e.kind == sql::ExprKind::kExists ||
                            (e.kind == sql::ExprKind::kUnary && e.unary_op == sql::UnaryOp::kNot &&
                             e.children[0]->kind == sql::ExprKind::kExists);
      (subquery ? in_subqueries : conjuncts).push_back(&e);
    }
  };
  if (s.where) split(*s.where);
  if (in_subqueries.empty() && s.where) conjuncts = {s.where.get()};  // the clause as it is written
  ExprPtr where;
  const bool join = s.from && s.from->kind == sql::TableRefKind::kJoin;  // the joins take their WHERE conjuncts
  FromResult from = join ? convertJoinFrom(*s.from, conjuncts, where) : s.from ? convertFrom(*s.from) : oneRowFrom();
  bool has_agg = !s.group_by.empty() || s.distinct || (s.having != nullptr);
  for (const auto& item : s.select_list)
    if (item.expr && containsAggregate(*item.expr)) has_agg = true;
  // A window TVF read without a window aggregation (alone, or ranked: window Top-N) is a WindowTableFunction
  // before anything reads its columns, so WHERE and the ranking function see window_start / window_end too.
  if (from.windowed && !has_agg && in_subqueries.empty()) from = windowTableFunction(from);
  if (!join) {
    for (const sql::Expr* c : conjuncts) {
      ExprPtr w = convert(*c, from.scope);
      checkBoolean(w, *c, "WHERE");
      where = where ? makeCall(ScalarOp::kAnd, {where, w}) : w;
    }
  }
  if (!in_subqueries.empty()) {
    if (from.windowed)
      fail(in_subqueries[0]->pos, "IN / EXISTS (subquery) over a window table function is not supported");
    if (where) {
      std::vector<ExprPtr> all;
      for (size_t i = 0; i < from.rel->row_type.size(); ++i)
        all.push_back(makeInputRef(static_cast<int>(i), from.rel->row_type.types[i]));
      from.rel = makeCalc(from.rel, where, all, from.rel->row_type.names);
      where = nullptr;
    }
    for (const sql::Expr* in : in_subqueries) from.rel = convertSubqueryPredicate(from.rel, from.scope, *in);
    for (auto& c : from.scope.columns) c.rowtime = false;  // a join's output has no time attributes
  }
  if (selectHasOver(s)) return convertOverSelect(s, from, where);
  if (!has_agg) {
    std::vector<ExprPtr> projections;
    std::vector<std::string> names;
    convertSelectList(s, from.scope, nullptr, projections, names);
    return makeCalc(from.rel, where, projections, names);
  }
  return convertAggregate(s, from, where);
}

void SqlToRelConverter::Impl::convertSelectList(const sql::SelectStmt& s, const Scope& scope,
                                                const NodeResolver* resolver, std::vector<ExprPtr>& projections,
                                                std::vector<std::string>& names) const {
  for (size_t i = 0; i < s.select_list.size(); ++i) {
    const auto& item = s.select_list[i];
    if (item.is_star) {
      expandStar(item, scope, projections, names);
      continue;
    }
    projections.push_back(convert(*item.expr, scope, resolver));
    names.push_back(itemName(item, i));
  }
}

void SqlToRelConverter::Impl::expandStar(const sql::SelectItem& item, const Scope& scope,
                                         std::vector<ExprPtr>& projections, std::vector<std::string>& names) const {
  bool any = false;
  for (const auto& c : scope.columns) {
    if (c.window_property) continue;
    if (!item.star_qualifier.empty() && c.qualifier != item.star_qualifier.back()) continue;
    if (c.row_value)
      fail(item.pos, fmt::format("ROW values are not supported yet: '*' includes the ROW column '{}'; select its "
                                 "fields ({}.<field>) instead",
                                 c.name, c.name));
    projections.push_back(makeInputRef(c.index, c.type));
    names.push_back(c.name);
    any = true;
  }
  if (!any) fail(item.pos, fmt::format("Unknown table '{}'", sql::qualifiedNameToString(item.star_qualifier)));
}

RelNodePtr SqlToRelConverter::Impl::convertQueryRel(const sql::Query& q) {
  const size_t outer_with = with_items.size();
  for (const auto& w : q.with) with_items.push_back(&w);
  std::vector<RelNodePtr> branches;
  std::vector<sql::SourcePos> at;
  for (const auto& sel : q.selects) {
    branches.push_back(convertSelect(sel));
    at.push_back(sel.pos);
  }
  RelNodePtr rel;
  if (branches.size() == 1) {
    rel = applyOrderByLimit(q, branches[0]);
  } else {
    // UNION ALL: same arity; column types unified to the least restrictive type (casts where needed).
    rel = applyOrderByLimit(q, makeUnionAll(unifyBranches(std::move(branches), at, "UNION ALL")));
  }
  with_items.resize(outer_with);
  return rel;
}

RelNodePtr SqlToRelConverter::Impl::makeSink(RelNodePtr input, const sql::InsertStmt& insert) {
  const CatalogTable* table = catalog.findTable(insert.target);
  if (table == nullptr) {
    if (catalog.findView(insert.target)) fail(insert.pos, "Cannot INSERT INTO a view");
    std::string close = closestConfigKey(Catalog::normalize(insert.target), catalog.names());
    fail(insert.pos, fmt::format("Object '{}' not found{}", sql::qualifiedNameToString(insert.target),
                                 close.empty() ? "" : fmt::format("; did you mean '{}'?", close)));
  }
  // Flink supports INSERT OVERWRITE in BATCH mode only; appending instead would silently keep the old rows.
  if (insert.overwrite && !batch())
    fail(insert.pos, "INSERT OVERWRITE is not supported in STREAMING mode (Flink allows it in BATCH mode only); use "
                     "INSERT INTO to append");
  if (insert.overwrite)
    fail(insert.pos, fmt::format("INSERT OVERWRITE requires that the underlying DynamicTableSink of table "
                                 "'default_catalog.default_database.{}' implements the SupportsOverwrite interface "
                                 "(no connector does yet); use INSERT INTO to append",
                                 Catalog::normalize(insert.target)));
  const sql::CreateTableStmt& def = *table->definition;
  ResolvedTable resolved;
  resolved.name = table->name;
  for (const auto& o : def.options) resolved.options[o.key] = o.value;
  for (const auto& c : def.columns) {
    if (c.kind != sql::ColumnKind::kPhysical) continue;
    if (c.type.id == TypeId::kRow)
      fail(insert.pos, fmt::format("ROW values are not supported yet: column '{}' of sink table '{}' is {}", c.name,
                                   table->name, c.type.toString()));
    resolved.physical_type.names.push_back(c.name);
    resolved.physical_type.types.push_back(c.type);
  }
  for (const auto& k : def.primary_key) resolved.primary_key.push_back(resolved.physical_type.indexOf(k));
  for (const auto& k : def.partition_keys) resolved.partition_keys.push_back(resolved.physical_type.indexOf(k));
  const RowType& sink_type = resolved.physical_type;

  // Map query columns to sink columns (explicit column list or all physical columns in order).
  std::vector<int> source_of(sink_type.size(), -1);
  if (insert.columns.empty()) {
    for (size_t i = 0; i < sink_type.size(); ++i) source_of[i] = static_cast<int>(i);
  } else {
    for (size_t i = 0; i < insert.columns.size(); ++i) {
      int idx = sink_type.indexOf(insert.columns[i]);
      if (idx < 0) fail(insert.pos, fmt::format("Unknown target column '{}'", insert.columns[i]));
      source_of[static_cast<size_t>(idx)] = static_cast<int>(i);
    }
  }
  size_t expected = insert.columns.empty() ? sink_type.size() : insert.columns.size();
  auto schemaText = [](const RowType& t) {
    std::string out = "[";
    for (size_t i = 0; i < t.size(); ++i) out += (i ? ", " : "") + t.names[i] + ": " + t.types[i].toString();
    return out + "]";
  };
  if (input->row_type.size() != expected)
    fail(insert.pos,
         fmt::format("Column types of query result and sink for 'default_catalog.default_database.{}' do not "
                     "match.\nCause: Different number of columns.\n\nQuery schema: {}\nSink schema:  {}",
                     table->name, schemaText(input->row_type), schemaText(sink_type)));
  std::vector<ExprPtr> projections;
  bool identity = true;
  for (size_t i = 0; i < sink_type.size(); ++i) {
    const LogicalType& target = sink_type.types[i];
    if (source_of[i] < 0) {
      if (!target.nullable)
        fail(insert.pos, fmt::format("Column '{}' is NOT NULL and has no value", sink_type.names[i]));
      projections.push_back(makeCast(makeLiteral(std::monostate{}, LogicalType::null()), target));
      identity = false;
      continue;
    }
    const LogicalType& from = input->row_type.types[static_cast<size_t>(source_of[i])];
    ExprPtr ref = makeInputRef(source_of[i], from);
    if (static_cast<size_t>(source_of[i]) != i) identity = false;
    if (!from.sameRoot(target)) {
      if (!canAssign(from, target))
        fail(insert.pos,
             fmt::format("Column types of query result and sink for 'default_catalog.default_database.{}' do "
                         "not match.\nCause: Incompatible types for sink column '{}' at position {}.\n\n"
                         "Query schema: {}\nSink schema:  {}",
                         table->name, sink_type.names[i], i, schemaText(input->row_type), schemaText(sink_type)));
      ref = makeCast(ref, target.withNullable(from.nullable), config.get(options::kLocalTimeZone));
      identity = false;
    }
    projections.push_back(ref);
  }
  if (!identity) input = makeCalc(input, nullptr, projections, sink_type.names);

  std::shared_ptr<DynamicTableSink> sink;
  try {
    const DynamicTableFactory& f = factories.find(resolved);
    sink = f.createSink(resolved, config);
  } catch (const SqlError&) {
    throw;
  } catch (const UserError& err) {
    fail(insert.pos,
         fmt::format("Unable to create a sink for writing table 'default_catalog.default_database.{}'.\n\n{}",
                     table->name, err.what()));
  }
  if (!resolved.partition_keys.empty() && !sink->supportsPartitioning())
    fail(insert.pos, fmt::format("Table 'default_catalog.default_database.{}' is a partitioned table, but the underlying "
                                 "DynamicTableSink doesn't implement the SupportsPartitioning interface.",
                                 table->name));
  SLUICE_CHECK(!batch() || !input->producesUpdates(), "an updating input to a sink in BATCH mode");
  if (input->producesUpdates() && !sink->acceptsUpdates()) {
    const RelNode* producer = input.get();
    while (producer->kind != RelKind::kGroupAggregate && producer->kind != RelKind::kChangelogNormalize &&
           producer->kind != RelKind::kRank && producer->kind != RelKind::kDeduplicate &&
           !(producer->kind == RelKind::kJoin && producer->producesUpdates()) && !producer->inputs.empty())
      producer = producer->inputs[0].get();
    fail(insert.pos, fmt::format("Table sink 'default_catalog.default_database.{}' doesn't support consuming update "
                                 "changes which is produced by node {}",
                                 table->name, producer->describe()));
  }
  auto rel = std::make_shared<RelNode>();
  rel->kind = RelKind::kSink;
  rel->inputs = {input};
  rel->row_type = input->row_type;
  rel->row_type.names = sink_type.names;
  rel->rowtime.assign(rel->row_type.size(), false);
  rel->changelog = input->changelog;
  rel->sink = sink;
  rel->sink_name = table->name;
  rel->parallelism = sink->parallelism().value_or(-1);
  rel->primary_key = resolved.primary_key;
  for (size_t i = 0; i < sink_type.size(); ++i)
    if (!sink_type.types[i].nullable && input->row_type.types[i].nullable)
      rel->not_null_columns.push_back(static_cast<int>(i));
  return rel;
}

SqlToRelConverter::SqlToRelConverter(const Catalog& catalog, const FactoryRegistry& factories,
                                     const Configuration& config, std::string_view script)
    : catalog_(catalog), factories_(factories), config_(config), script_(script) {}

void SqlToRelConverter::validateCreateTable(const sql::CreateTableStmt& def) {
  Impl impl{catalog_, factories_, config_, script_};
  impl.resolveSchema(def, Catalog::normalize(def.name), def.name.back());
}

std::vector<types::LogicalType> SqlToRelConverter::columnTypes(const sql::CreateTableStmt& def) {
  Impl impl{catalog_, factories_, config_, script_};
  Impl::TableSchema schema = impl.resolveSchema(def, Catalog::normalize(def.name), def.name.back());
  std::vector<types::LogicalType> out;
  for (const auto& c : def.columns) {
    LogicalType t = c.type;
    for (const auto& sc : schema.scope)
      if (sc.name == c.name && sc.nested.empty()) t = sc.type;
    const int physical = schema.resolved.physical_type.indexOf(c.name);
    if (c.kind == sql::ColumnKind::kPhysical && physical >= 0)
      t.nullable = schema.resolved.physical_type.types[static_cast<size_t>(physical)].nullable;
    out.push_back(t);
  }
  return out;
}

RelNodePtr SqlToRelConverter::convertQuery(const sql::Query& query) {
  Impl impl{catalog_, factories_, config_, script_};
  RelNodePtr rel = impl.convertQueryRel(query);
  impl.checkRanks(rel);
  return rel;
}

RelNodePtr SqlToRelConverter::convertInsert(const sql::InsertStmt& insert) {
  Impl impl{catalog_, factories_, config_, script_};
  RelNodePtr rel = impl.convertQueryRel(*insert.query);
  impl.checkRanks(rel);
  return impl.makeSink(rel, insert);
}

RelNodePtr SqlToRelConverter::convertQueryForCollect(const sql::Query& query) {
  Impl impl{catalog_, factories_, config_, script_};
  RelNodePtr input = impl.convertQueryRel(query);
  impl.checkRanks(input);
  auto rel = std::make_shared<RelNode>();
  rel->kind = RelKind::kSink;
  rel->inputs = {input};
  rel->row_type = input->row_type;
  rel->rowtime.assign(rel->row_type.size(), false);
  rel->changelog = input->changelog;
  rel->sink_name = "collect";
  rel->parallelism = 1;
  return rel;
}

}  // namespace sluice::table

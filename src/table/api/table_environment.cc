#include "table/api/table_environment.h"

#include "table/api/catalog_statements.h"

#include <fmt/format.h>

#include "common/error.h"
#include "graph/job_graph.h"
#include "graph/plan.h"
#include "graph/stream_graph.h"
#include "table/api/collect_sink.h"
#include "table/api/job_runner.h"
#include "table/catalog/catalog.h"
#include "table/catalog/table_like.h"
#include "table/catalog/table_factory.h"
#include "table/planner/column_pruning.h"
#include "table/planner/exec_translator.h"
#include "table/planner/sql_to_rel.h"
#include "table/planner/subplan_reuse.h"
#include "table/sql/parser.h"
#include "types/row_batch.h"

namespace sluice::table {

struct TableEnvironment::Impl {
  std::function<void(const types::RowType&, const types::RowBatch&)> collect;
  std::function<void(const std::string&)> message;
  std::function<void(const types::RowType&, const types::RowBatch&)> table_result;
  std::function<void(const types::RowType&)> query_start;
  std::function<void(const std::string&)> status;
  std::function<void(const std::vector<VertexProgress>&)> progress;
  int64_t progress_interval_ms = 2000;
  std::shared_ptr<JobCancellation> cancellation = std::make_shared<JobCancellation>();
  std::vector<std::shared_ptr<cluster::JobListener>> listeners;
};

TableEnvironment::TableEnvironment(Configuration config, std::shared_ptr<const FactoryRegistry> factories)
    : config_(std::move(config)),
      factories_(std::move(factories)),
      catalog_(std::make_unique<Catalog>()),
      impl_(std::make_unique<Impl>()) {}

TableEnvironment::~TableEnvironment() = default;

void TableEnvironment::setCollectCallback(std::function<void(const types::RowType&, const types::RowBatch&)> cb) {
  impl_->collect = std::move(cb);
}
void TableEnvironment::setQueryStartCallback(std::function<void(const types::RowType&)> cb) {
  impl_->query_start = std::move(cb);
}
void TableEnvironment::setMessageCallback(std::function<void(const std::string&)> cb) { impl_->message = std::move(cb); }
void TableEnvironment::setTableResultCallback(std::function<void(const types::RowType&, const types::RowBatch&)> cb) {
  impl_->table_result = std::move(cb);
}
void TableEnvironment::setStatusCallback(std::function<void(const std::string&)> cb) { impl_->status = std::move(cb); }
void TableEnvironment::setProgressCallback(std::function<void(const std::vector<VertexProgress>&)> cb, int64_t interval_ms) {
  impl_->progress = std::move(cb);
  impl_->progress_interval_ms = interval_ms;
}

void TableEnvironment::registerJobListener(std::shared_ptr<cluster::JobListener> listener) {
  impl_->listeners.push_back(std::move(listener));
}

void TableEnvironment::cancel() { impl_->cancellation->cancel(); }
std::string TableEnvironment::savepoint(const std::string& target_dir, std::chrono::milliseconds timeout) {
  return impl_->cancellation->savepoint(target_dir, timeout);
}
bool TableEnvironment::cancelled() const { return impl_->cancellation->requested(); }
void TableEnvironment::resetCancellation() { impl_->cancellation->reset(); }

namespace {

/// A planned job: its sink roots and a name.
struct PlannedJob {
  std::vector<RelNodePtr> roots;
  std::string name;
};

std::string jobName(const Configuration& config, const std::string& fallback) {
  std::string n = config.get(options::kPipelineName);
  return n.empty() ? fallback : n;
}

}  // namespace

namespace {

// Applies DDL and SET; returns true when the statement was handled here.
bool applyStatement(sql::Statement& st, std::string_view script, Catalog& catalog, const FactoryRegistry& factories,
                    Configuration& config, const std::function<void(const std::string&)>& message) {
  switch (st.kind) {
    case sql::StatementKind::kCreateTable: {
      sql::CreateTableStmt& ct = *st.create_table;
      const std::shared_ptr<const sql::Query> as_query = ct.as_query;
      sql::CreateTableStmt resolved = ct.like ? mergeTableLike(ct, catalog, script) : std::move(ct);
      resolved.like.reset();
      resolved.as_query.reset();
      const bool exists = catalog.findTable(resolved.name) || catalog.findView(resolved.name);
      if (as_query && !(exists && resolved.if_not_exists)) {
        // CTAS: the query's columns, in order, with their types (FLIP-218); the rows follow as an INSERT.
        types::RowType row = SqlToRelConverter(catalog, factories, config, script).convertQuery(*as_query)->row_type;
        for (size_t i = 0; i < row.size(); ++i) {
          for (const auto& c : resolved.columns)
            if (c.name == row.names[i])
              sql::throwSqlError(fmt::format("Duplicate column name '{}' in the query of CREATE TABLE AS SELECT; "
                                             "give the columns distinct aliases",
                                             c.name),
                                 script, resolved.as_pos, "SQL validation error");
          if (row.types[i].id == types::TypeId::kNull)
            sql::throwSqlError(fmt::format("Illegal use of 'NULL': column '{}' of CREATE TABLE AS SELECT has no type; "
                                           "CAST it to one",
                                           row.names[i]),
                               script, resolved.as_pos, "SQL validation error");
          sql::ColumnDef col;
          col.pos = resolved.as_pos;
          col.name = row.names[i];
          col.type = row.types[i];
          resolved.columns.push_back(std::move(col));
        }
      }
      auto def = std::make_shared<const sql::CreateTableStmt>(std::move(resolved));
      if (!(as_query && exists && def->if_not_exists)) {
        SqlToRelConverter(catalog, factories, config, script).validateCreateTable(*def);
        try {
          catalog.createTable(def, st.pos);
        } catch (const SqlError& e) {
          sql::throwSqlError(e.what(), script, st.pos, "SQL validation error");
        }
      }
      if (!as_query) return true;
      // The insert of CREATE TABLE AS SELECT runs as the statement's job.
      auto insert = std::make_unique<sql::InsertStmt>();
      insert->pos = st.pos;
      insert->target = def->name;
      insert->query = as_query->clone();
      st.kind = sql::StatementKind::kInsert;
      st.insert = std::move(insert);
      st.create_table.reset();
      return false;
    }
    case sql::StatementKind::kCreateView: {
      std::shared_ptr<const sql::CreateViewStmt> def(std::move(st.create_view));
      // Validated when created, as Flink does: a wrong query fails here, not where the view is used.
      if (!(def->if_not_exists && (catalog.findTable(def->name) || catalog.findView(def->name))))
        SqlToRelConverter(catalog, factories, config, script).convertQuery(*def->query);
      try {
        catalog.createView(def, st.pos);
      } catch (const SqlError& e) {
        sql::throwSqlError(e.what(), script, st.pos, "SQL validation error");
      }
      return true;
    }
    case sql::StatementKind::kSet: {
      if (!st.key) {
        std::string text;
        for (const auto& kv : config.values()) text += fmt::format("'{}' = '{}'\n", kv.first, kv.second);
        if (message) message(text);
        return true;
      }
      try {
        config.set(*st.key, st.value.value_or(""));
      } catch (const ConfigError& e) {
        sql::throwSqlError(e.what(), script, st.pos, "SQL validation error");
      }
      return true;
    }
    case sql::StatementKind::kReset:
      // Flink's RESET restores the default; the session keeps only explicitly set keys.
      if (st.key && !findConfigOption(*st.key))
        sql::throwSqlError(fmt::format("Unknown configuration key '{}'", *st.key), script, st.pos, "SQL validation error");
      // A deprecated key resets the option it names.
      if (st.key) config.reset(*st.key);
      else config = Configuration();
      return true;
    default:
      return false;
  }
}

}  // namespace

struct JobPlanner {
  const Catalog& catalog;
  const FactoryRegistry& factories;
  const Configuration& config;
  std::string_view script;
  CollectCallback collect;

  PlannedJob plan(const sql::Statement& st) const {
    SqlToRelConverter conv(catalog, factories, config, script);
    PlannedJob job;
    switch (st.kind) {
      case sql::StatementKind::kInsert:
        job.roots.push_back(conv.convertInsert(*st.insert));
        job.name = jobName(config, "insert-into_default_catalog.default_database." +
                                       Catalog::normalize(st.insert->target));
        break;
      case sql::StatementKind::kStatementSet:
        for (const auto& ins : st.statement_set) job.roots.push_back(conv.convertInsert(ins));
        job.name = jobName(config, "insert-into_statement_set");
        break;
      case sql::StatementKind::kQuery:
        job.roots.push_back(conv.convertQueryForCollect(*st.query));
        job.name = jobName(config, "collect");
        break;
      default:
        sql::throwSqlError("This statement cannot be run as a job", script, st.pos, "SQL validation error");
    }
    optimize(job);
    return job;
  }

  /// The INSERTs of a StatementSet as one job, each converted against its own text (for error carets).
  PlannedJob planInserts(const std::vector<std::string>& texts) const {
    if (texts.empty()) throw UserError("The statement set has no INSERT statement to execute or explain");
    PlannedJob job;
    for (const auto& text : texts) {
      std::vector<sql::Statement> statements = sql::parseScript(text);
      job.roots.push_back(SqlToRelConverter(catalog, factories, config, text).convertInsert(*statements.at(0).insert));
    }
    job.name = jobName(config, "insert-into_statement_set");
    optimize(job);
    return job;
  }

  /// Reuse first, on scans that still read every column: pruning then gives a shared scan the union of
  /// the columns its consumers read (Flink's SubplanReuser and ScanReuser).
  void optimize(PlannedJob& job) const { job.roots = pruneColumns(reuseDuplicatedSubplans(job.roots, config)); }

  std::vector<graph::TransformationPtr> translate(const PlannedJob& job) const {
    std::shared_ptr<const runtime::StreamOperatorFactory> collect_factory;
    for (const auto& r : job.roots)
      if (r->kind == RelKind::kSink && !r->sink) collect_factory = makeCollectSinkFactory(r->row_type, collect);
    return translateToTransformations(job.roots, config, collect_factory);
  }
};

namespace {

struct CompiledJob {
  graph::StreamGraph stream_graph;
  graph::JobGraph job_graph;
};

CompiledJob compile(const JobPlanner& planner, const PlannedJob& job) {
  CompiledJob out;
  out.stream_graph = graph::StreamGraphGenerator(planner.config).generate(planner.translate(job), job.name);
  out.job_graph = graph::StreamingJobGraphGenerator::createJobGraph(out.stream_graph);
  return out;
}

std::string explainJob(const JobPlanner& planner, const PlannedJob& job, bool json) {
  CompiledJob compiled = compile(planner, job);
  if (json) return graph::jobGraphToJson(compiled.job_graph) + "\n";
  std::string out = "== Optimized Physical Plan ==\n";
  out += explainPlan(job.roots);
  out += "\n== Stream Graph ==\n" + graph::streamGraphToText(compiled.stream_graph);
  out += "\n== Job Graph ==\n" + graph::jobGraphToText(compiled.job_graph);
  return out;
}

}  // namespace

void TableEnvironment::runJobGraph(const graph::JobGraph& job) {
  JobRunOptions run;
  run.progress = impl_->progress;
  run.progress_interval_ms = impl_->progress_interval_ms;
  run.cancellation = impl_->cancellation;
  run.status = impl_->status;
  run.listeners = impl_->listeners;
  jobs_.push_back(runJob(job, config_, run));
}

void TableEnvironment::executeScript(std::string_view script) {
  std::vector<sql::Statement> statements = sql::parseScript(script);
  for (auto& st : statements) {
    if (impl_->cancellation->requested()) return;
    if (applyStatement(st, script, *catalog_, *factories_, config_, impl_->message)) continue;
    std::optional<StatementResult> result;
    if (runCatalogStatement(st, script, *catalog_, *factories_, config_, result)) {
      if (result && result->text) {
        if (impl_->message) impl_->message(*result->text);
      } else if (result && impl_->table_result) {
        impl_->table_result(result->schema, result->rows);
      }
      continue;
    }
    JobPlanner planner{*catalog_, *factories_, config_, script, impl_->collect};
    if (st.kind == sql::StatementKind::kExplain) {
      std::string text = explainJob(planner, planner.plan(*st.explained), false);
      if (impl_->message) impl_->message(text);
      continue;
    }
    PlannedJob planned = planner.plan(st);
    if (st.kind == sql::StatementKind::kQuery && impl_->query_start && planned.roots.size() == 1) {
      impl_->query_start(planned.roots[0]->row_type);
    }
    runJobGraph(compile(planner, planned).job_graph);
  }
}

std::string TableEnvironment::explainScript(std::string_view script, bool json) {
  std::vector<sql::Statement> statements = sql::parseScript(script);
  std::string out;
  for (auto& st : statements) {
    if (applyStatement(st, script, *catalog_, *factories_, config_, nullptr)) continue;
    std::optional<StatementResult> ignored;
    if (runCatalogStatement(st, script, *catalog_, *factories_, config_, ignored)) continue;
    JobPlanner planner{*catalog_, *factories_, config_, script, impl_->collect};
    const sql::Statement& target = st.kind == sql::StatementKind::kExplain ? *st.explained : st;
    out += explainJob(planner, planner.plan(target), json);
    if (!json) out += "\n";
  }
  return out;
}

StatementSet TableEnvironment::createStatementSet() { return StatementSet(*this); }

void TableEnvironment::createTemporarySystemFunction(const std::string& name,
                                                     std::shared_ptr<const UserDefinedFunction> function) {
  SLUICE_CHECK(function != nullptr, "createTemporarySystemFunction({}): no function", name);
  if (!catalog_->createFunction(CatalogFunction{name, FunctionScope::kTemporarySystem, std::move(function), {}}))
    throw UserError(fmt::format("Could not register temporary system function. A function named '{}' does "
                                "already exist.", name));
}

void TableEnvironment::createTemporaryFunction(const std::string& name, std::shared_ptr<const UserDefinedFunction> function) {
  SLUICE_CHECK(function != nullptr, "createTemporaryFunction({}): no function", name);
  if (!catalog_->createFunction(CatalogFunction{name, FunctionScope::kTemporary, std::move(function), {}}))
    throw UserError(fmt::format("Could not register temporary catalog function. A function "
                                "'default_catalog.default_database.{}' does already exist.", name));
}

bool TableEnvironment::dropTemporarySystemFunction(const std::string& name) {
  return catalog_->dropFunction(name, FunctionScope::kTemporarySystem);
}

bool TableEnvironment::dropTemporaryFunction(const std::string& name) {
  return catalog_->dropFunction(name, FunctionScope::kTemporary);
}

StatementSet& StatementSet::addInsertSql(std::string statement) {
  std::vector<sql::Statement> statements = sql::parseScript(statement);
  if (statements.empty()) throw UserError("A statement set takes INSERT statements; the text has no statement");
  if (statements.size() > 1)
    sql::throwSqlError("A statement set takes one INSERT statement at a time", statement, statements[1].pos,
                       "SQL validation error");
  if (statements[0].kind != sql::StatementKind::kInsert)
    sql::throwSqlError("Only INSERT statements can be added to a statement set", statement, statements[0].pos,
                       "SQL validation error");
  statements_.push_back(std::move(statement));
  return *this;
}

std::string StatementSet::explain(bool json) const {
  JobPlanner planner{*env_->catalog_, *env_->factories_, env_->config_, {}, env_->impl_->collect};
  return explainJob(planner, planner.planInserts(statements_), json);
}

JobSummary StatementSet::execute() {
  JobPlanner planner{*env_->catalog_, *env_->factories_, env_->config_, {}, env_->impl_->collect};
  env_->runJobGraph(compile(planner, planner.planInserts(statements_)).job_graph);
  statements_.clear();
  return env_->jobs_.back();
}

}  // namespace sluice::table

#pragma once
// Helpers of the Kafka connector tests: a mock cluster, SQL scripts run on an embedded cluster, and
// changelog bookkeeping.

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/config.h"
#include "connectors/builtin.h"
#include "connectors/kafka/mock_cluster.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace sluice::connectors::kafka::testing {

/// A table environment with the built-in connectors, running jobs at `parallelism`.
inline std::unique_ptr<table::TableEnvironment> newEnvironment(int parallelism = 1) {
  Configuration config;
  config.set("parallelism.default", std::to_string(parallelism));
  auto registry = std::make_shared<table::FactoryRegistry>();
  registerBuiltinConnectors(*registry);
  return std::make_unique<table::TableEnvironment>(config, registry);
}

/// An environment at `parallelism` that checkpoints every 10 ms, restarts up to 3 times 10 ms apart, reads
/// in polls of 3 records, and fails operator `fail_operator` (a part of its name) in subtask 0 after
/// `fail_after` records once a checkpoint completed (sluice.test.*; one failing attempt).
inline std::unique_ptr<table::TableEnvironment> newFailingEnvironment(int parallelism, const std::string& fail_operator,
                                                                      int64_t fail_after) {
  auto env = newEnvironment(parallelism);
  env->config().set("execution.checkpointing.interval", "10 ms");
  env->config().set("restart-strategy.type", "fixed-delay");
  env->config().set("restart-strategy.fixed-delay.attempts", "3");
  env->config().set("restart-strategy.fixed-delay.delay", "10 ms");
  env->config().set("sluice.batch.size", "3");
  env->config().set("sluice.test.fail-operator", fail_operator);
  env->config().set("sluice.test.fail-subtask", "0");
  env->config().set("sluice.test.fail-after-records", std::to_string(fail_after));
  return env;
}

/// Appends the changelog lines ("+I[1, a]") of `batch` to `lines`.
inline void appendChangelog(const types::RowBatch& batch, std::vector<std::string>& lines) {
  for (size_t r = 0; r < batch.numRows(); ++r) {
    std::string line;
    types::formatRow(batch, r, line);
    lines.push_back(line);
  }
}

/// The changelog lines ("+I[1, a]") of the bare SELECTs of `script`, in arrival order, run at
/// `parallelism`; the summaries of its jobs go to `jobs` when given. Throws what executeScript throws.
inline std::vector<std::string> runSql(const std::string& script, int parallelism = 1,
                                       std::vector<table::JobSummary>* jobs = nullptr) {
  auto env = newEnvironment(parallelism);
  std::mutex mu;
  std::vector<std::string> lines;
  env->setCollectCallback([&](const types::RowType&, const types::RowBatch& batch) {
    std::lock_guard<std::mutex> lock(mu);
    appendChangelog(batch, lines);
  });
  env->executeScript(script);
  if (jobs != nullptr) *jobs = env->jobs();
  return lines;
}

/// The rows left after applying a changelog (+I/+U add, -U/-D remove), as a sorted multiset of "[...]".
inline std::multiset<std::string> materialize(const std::vector<std::string>& changelog) {
  std::multiset<std::string> rows;
  for (const auto& line : changelog) {
    std::string body = line.substr(2);
    if (line[0] == '+') {
      rows.insert(body);
    } else {
      auto it = rows.find(body);
      if (it != rows.end()) rows.erase(it);
      else rows.insert("MISSING " + line);
    }
  }
  return rows;
}

/// A record with a value only.
inline KafkaRecord valueRecord(std::string value, int partition = 0, int64_t ts = 0) {
  KafkaRecord r;
  r.value = std::move(value);
  r.partition = partition;
  r.timestamp_ms = ts;
  return r;
}

}  // namespace sluice::connectors::kafka::testing

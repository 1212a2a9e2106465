#pragma once
/// The `print` and `blackhole` sink connectors (Flink's PrintTableSinkFactory and
/// BlackHoleTableSinkFactory).
///
/// print writes one line per row in Flink's format: an optional prefix, then the row as
/// types::formatRow renders it ("+I[a, 1]"). Prefix (PrintSinkOutputWriter): "identifier> " with
/// `print-identifier` and parallelism 1, "identifier:N> " with an identifier and parallelism > 1,
/// "N> " without identifier and parallelism > 1, nothing otherwise; N = subtask index + 1.
/// `standard-error` = true writes to stderr. Each batch is formatted first and written with one
/// mutex-guarded write, so lines of different subtasks never interleave.
/// blackhole accepts every row (also updates) and only counts them.

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

#include "runtime/operators/stream_operator.h"
#include "table/catalog/table_factory.h"

namespace sluice::connectors {

/// Sends the output of every print sink (stdout and stderr ones) to `stream` instead; nullptr restores
/// std::cout / std::cerr. Thread-safe; meant for tests and embedding.
void setPrintStream(std::ostream* stream);

/// The prefix of a print line: see the file comment. `subtask_index` is 0-based.
std::string printLinePrefix(const std::string& identifier, int subtask_index, int parallelism);

/// Options of one print table.
struct PrintSinkSpec {
  std::string identifier;  ///< print-identifier, empty when unset
  bool standard_error = false;
};

/// One subtask of the print sink.
class PrintSinkOperator : public runtime::StreamOperator {
 public:
  explicit PrintSinkOperator(std::shared_ptr<const PrintSinkSpec> spec);
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Formats the rows and writes them as one block (thread-safe across subtasks).
  void processBatch(types::RowBatch&& batch) override;

 private:
  std::shared_ptr<const PrintSinkSpec> spec_;
  std::string prefix_;
  std::string text_;
};

/// The print sink the planner gets; accepts updates (prints -U/+U/-D rows).
class PrintTableSink : public table::DynamicTableSink {
 public:
  PrintTableSink(std::shared_ptr<const PrintSinkSpec> spec, std::optional<int> parallelism);
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override;
  std::optional<int> parallelism() const override { return parallelism_; }
  bool acceptsUpdates() const override { return true; }
  std::string summary() const override;

 private:
  std::shared_ptr<const PrintSinkSpec> spec_;
  std::optional<int> parallelism_;
};

/// Factory for `'connector' = 'print'` (sink only).
class PrintTableFactory : public table::DynamicTableFactory {
 public:
  std::string identifier() const override { return "print"; }
  std::set<std::string> supportedOptions() const override;
  std::unique_ptr<table::DynamicTableSink> createSink(const table::ResolvedTable& table,
                                                      const Configuration& config) const override;
};

/// One subtask of the blackhole sink: counts rows.
class BlackHoleSinkOperator : public runtime::StreamOperator {
 public:
  void processBatch(types::RowBatch&& batch) override;
  /// Rows received so far (any thread).
  int64_t rowsReceived() const { return rows_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> rows_{0};
};

/// The blackhole sink; accepts updates.
class BlackHoleTableSink : public table::DynamicTableSink {
 public:
  explicit BlackHoleTableSink(std::optional<int> parallelism) : parallelism_(parallelism) {}
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override;
  std::optional<int> parallelism() const override { return parallelism_; }
  bool acceptsUpdates() const override { return true; }
  std::string summary() const override { return "blackhole"; }

 private:
  std::optional<int> parallelism_;
};

/// Factory for `'connector' = 'blackhole'` (sink only; Flink's has no options besides `connector`,
/// `sink.parallelism` is accepted as well).
class BlackHoleTableFactory : public table::DynamicTableFactory {
 public:
  std::string identifier() const override { return "blackhole"; }
  std::set<std::string> supportedOptions() const override { return {"sink.parallelism"}; }
  std::unique_ptr<table::DynamicTableSink> createSink(const table::ResolvedTable& table,
                                                      const Configuration& config) const override;
};

}  // namespace sluice::connectors

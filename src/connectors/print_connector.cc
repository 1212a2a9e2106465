#include "connectors/print_connector.h"

#include <iostream>
#include <mutex>

#include <fmt/format.h>

#include "connectors/connector_options.h"
#include "connectors/operator_util.h"
#include "types/value_format.h"

namespace sluice::connectors {

namespace {

std::mutex& printMutex() {
  static std::mutex m;
  return m;
}

// Guarded by printMutex().
std::ostream* g_print_stream = nullptr;

}  // namespace

void setPrintStream(std::ostream* stream) {
  std::lock_guard<std::mutex> lock(printMutex());
  g_print_stream = stream;
}

std::string printLinePrefix(const std::string& identifier, int subtask_index, int parallelism) {
  if (!identifier.empty()) {
    return parallelism > 1 ? fmt::format("{}:{}> ", identifier, subtask_index + 1) : identifier + "> ";
  }
  return parallelism > 1 ? fmt::format("{}> ", subtask_index + 1) : std::string();
}

PrintSinkOperator::PrintSinkOperator(std::shared_ptr<const PrintSinkSpec> spec) : spec_(std::move(spec)) {}

void PrintSinkOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  prefix_ = printLinePrefix(spec_->identifier, ctx.subtask_index, ctx.parallelism);
}

void PrintSinkOperator::processBatch(types::RowBatch&& batch) {
  const size_t n = batch.numRows();
  if (n == 0) return;
  text_.clear();
  for (size_t r = 0; r < n; ++r) {
    text_ += prefix_;
    types::formatRow(batch, r, text_);
    text_ += '\n';
  }
  std::lock_guard<std::mutex> lock(printMutex());
  std::ostream& out = g_print_stream != nullptr ? *g_print_stream : (spec_->standard_error ? std::cerr : std::cout);
  out.write(text_.data(), static_cast<std::streamsize>(text_.size()));
  out.flush();
}

PrintTableSink::PrintTableSink(std::shared_ptr<const PrintSinkSpec> spec, std::optional<int> parallelism)
    : spec_(std::move(spec)), parallelism_(parallelism) {}

std::shared_ptr<const runtime::StreamOperatorFactory> PrintTableSink::operatorFactory() const {
  auto spec = spec_;
  return runtime::makeOperatorFactory([spec] { return std::make_unique<PrintSinkOperator>(spec); });
}

std::string PrintTableSink::summary() const {
  return spec_->identifier.empty() ? std::string("print") : fmt::format("print identifier={}", spec_->identifier);
}

std::set<std::string> PrintTableFactory::supportedOptions() const {
  return {"print-identifier", "standard-error", "sink.parallelism"};
}

std::unique_ptr<table::DynamicTableSink> PrintTableFactory::createSink(const table::ResolvedTable& table,
                                                                       const Configuration&) const {
  auto spec = std::make_shared<PrintSinkSpec>();
  spec->identifier = findOption(table.options, "print-identifier").value_or("");
  spec->standard_error = boolOption(table.options, "standard-error", false, table.name);
  return std::make_unique<PrintTableSink>(std::move(spec),
                                          parallelismOption(table.options, "sink.parallelism", table.name));
}

void BlackHoleSinkOperator::processBatch(types::RowBatch&& batch) {
  const auto n = static_cast<int64_t>(batch.numRows());
  rows_.fetch_add(n, std::memory_order_relaxed);
}

std::shared_ptr<const runtime::StreamOperatorFactory> BlackHoleTableSink::operatorFactory() const {
  return runtime::makeOperatorFactory([] { return std::make_unique<BlackHoleSinkOperator>(); });
}

std::unique_ptr<table::DynamicTableSink> BlackHoleTableFactory::createSink(const table::ResolvedTable& table,
                                                                           const Configuration&) const {
  return std::make_unique<BlackHoleTableSink>(parallelismOption(table.options, "sink.parallelism", table.name));
}

}  // namespace sluice::connectors

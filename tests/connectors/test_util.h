#pragma once
// Helpers shared by the connector tests: a collecting Output, temp files, driving a source.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "table/catalog/table_factory.h"
#include "types/row_batch.h"

namespace sluice::connectors::testing {

/// Keeps every batch it is given.
class CollectingOutput : public runtime::Output {
 public:
  void collect(types::RowBatch&& batch) override { batches.push_back(std::move(batch)); }
  void emitWatermark(runtime::Watermark) override {}
  size_t rows() const {
    size_t n = 0;
    for (const auto& b : batches) n += b.numRows();
    return n;
  }
  std::vector<types::RowBatch> batches;
};

/// A fresh directory under the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("sluice_conn_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }
  /// Writes `content` to `name` inside the directory and returns the full path.
  std::string write(const std::string& name, const std::string& content) const {
    std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << content;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

/// Reads a whole file.
inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Runs one source subtask to the end (bounded sources only) and returns its output.
inline std::unique_ptr<runtime::StreamOperator> runSource(const table::ScanTableSource& source, int subtask,
                                                          int parallelism, CollectingOutput& out) {
  auto op = source.operatorFactory()->createOperator();
  runtime::OperatorContext ctx;
  ctx.subtask_index = subtask;
  ctx.parallelism = parallelism;
  op->open(ctx, &out);
  auto* src = dynamic_cast<runtime::SourceOperator*>(op.get());
  while (src->emitNext() != runtime::InputStatus::kEndOfInput) {
  }
  op->close();
  return op;
}

}  // namespace sluice::connectors::testing

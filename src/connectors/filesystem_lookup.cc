// The filesystem table as a lookup join's dimension table (Flink's FileSystemLookupFunction): the whole
// table is read through the scan's reader, so rows parse and fail (`<file>:<line>`) exactly as a scan.

#include "common/error.h"
#include "connectors/filesystem_connector.h"
#include "table/runtime/lookup_join.h"

namespace sluice::connectors {

namespace {

/// Collects every batch a reader emits.
class CollectingOutput final : public runtime::ReaderOutput<types::RowBatch> {
 public:
  explicit CollectingOutput(std::vector<types::RowBatch>& out) : out_(out) {}
  void collect(types::RowBatch value) override {
    if (!value.empty()) out_.push_back(std::move(value));
  }
  void collect(types::RowBatch value, int64_t) override { collect(std::move(value)); }

 private:
  std::vector<types::RowBatch>& out_;
};

class FileSystemLookupLoader final : public table::LookupTableLoader {
 public:
  explicit FileSystemLookupLoader(std::shared_ptr<const FileSystemSourceSpec> spec)
      : spec_(std::move(spec)), type_(spec_->producedType()) {}

  const types::RowType& rowType() const override { return type_; }
  int64_t cacheTtlMs() const override { return spec_->lookup_cache_ttl_ms; }

  void load(const Configuration* config, std::vector<types::RowBatch>& out) const override {
    FileSystemSource source(spec_);
    runtime::SourceReaderContext ctx;
    ctx.config = config;
    auto reader = source.createReader(ctx);
    // One reader over every split of a single subtask: all files of the path, in order.
    for (auto& splits : source.splitsBySubtask(1)) reader->addSplits(std::move(splits));
    CollectingOutput output(out);
    while (reader->pollNext(output) != runtime::InputStatus::kEndOfInput) {
    }
    reader->close();
  }

 private:
  std::shared_ptr<const FileSystemSourceSpec> spec_;
  types::RowType type_;
};

}  // namespace

std::shared_ptr<const table::LookupTableLoader> FileSystemTableSource::lookupLoader() const {
  if (spec_->format == "debezium-json") return nullptr;
  return std::make_shared<FileSystemLookupLoader>(spec_);
}

}  // namespace sluice::connectors

#include "table/runtime/values_source.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/operators/row_source_reader_operator.h"
#include "runtime/operators/stream_operator.h"

namespace sluice::table {
namespace {

class ValuesEnumerator final : public runtime::SplitEnumerator<ValuesSplit> {
 public:
  std::optional<ValuesSplit> handleSplitRequest(int subtask) override {
    if (subtask < 0 || given_) return std::nullopt;
    given_ = true;
    return ValuesSplit{};
  }

 private:
  bool given_ = false;
};

class ValuesReader final : public runtime::SourceReader<types::RowBatch, ValuesSplit> {
 public:
  ValuesReader(std::shared_ptr<const types::RowBatch> rows, size_t batch_size)
      : rows_(std::move(rows)), batch_size_(batch_size) {}

  void addSplit(ValuesSplit split) override { splits_.push_back(split); }

  runtime::InputStatus pollNext(runtime::ReaderOutput<types::RowBatch>& output) override {
    if (splits_.empty()) return runtime::InputStatus::kEndOfInput;
    ValuesSplit& s = splits_.front();
    const size_t total = rows_->numRows();
    size_t from = static_cast<size_t>(std::max<int64_t>(0, s.emitted));
    if (from < total) {
      const size_t to = std::min(total, from + batch_size_);
      types::RowBatch batch(rows_->rowType());
      batch.reserve(to - from);
      for (size_t r = from; r < to; ++r) batch.appendRow(*rows_, r);
      s.emitted = static_cast<int64_t>(to);
      output.collect(std::move(batch));
      from = to;
    }
    if (from >= total) splits_.erase(splits_.begin());
    return splits_.empty() ? runtime::InputStatus::kEndOfInput : runtime::InputStatus::kMoreAvailable;
  }

  std::vector<ValuesSplit> snapshotState(int64_t) override { return splits_; }

 private:
  std::shared_ptr<const types::RowBatch> rows_;
  size_t batch_size_;
  std::vector<ValuesSplit> splits_;
};

class ValuesSource final : public runtime::Source<types::RowBatch, ValuesSplit> {
 public:
  explicit ValuesSource(std::shared_ptr<const types::RowBatch> rows) : rows_(std::move(rows)) {}
  std::unique_ptr<runtime::SplitEnumerator<ValuesSplit>> createEnumerator(int) const override {
    return std::make_unique<ValuesEnumerator>();
  }
  std::unique_ptr<runtime::SourceReader<types::RowBatch, ValuesSplit>> createReader(
      const runtime::SourceReaderContext& ctx) const override {
    int n = ctx.config != nullptr ? ctx.config->get(options::kBatchSize) : 1024;
    return std::make_unique<ValuesReader>(rows_, n > 0 ? static_cast<size_t>(n) : 1);
  }

 private:
  std::shared_ptr<const types::RowBatch> rows_;
};

}  // namespace

std::shared_ptr<const runtime::StreamOperatorFactory> makeValuesSourceFactory(
    std::shared_ptr<const types::RowBatch> rows) {
  auto source = std::make_shared<const ValuesSource>(std::move(rows));
  return runtime::makeOperatorFactory(
      [source] { return std::make_unique<runtime::RowSourceReaderOperator<ValuesSplit>>(source); }, true);
}

}  // namespace sluice::table

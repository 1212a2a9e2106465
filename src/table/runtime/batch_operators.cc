#include "table/runtime/batch_operators.h"

#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/sort_key_codec.h"

namespace sluice::table {

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

constexpr size_t kOutputBatchRows = 1024;

/// Emits rows (KeyCodec form) in batches of kOutputBatchRows as +I.
class RowEmitter {
 public:
  RowEmitter(const RowType& type, const agg::KeyCodec& codec, runtime::Output* output)
      : type_(type), codec_(codec), output_(output), batch_(type) {}
  void add(const std::string& row) {
    codec_.decodeAppend(row, batch_, 0);
    batch_.kinds().push_back(RowKind::kInsert);
    if (batch_.numRows() >= kOutputBatchRows) flush();
  }
  void flush() {
    if (batch_.empty()) return;
    output_->collect(std::move(batch_));
    batch_ = RowBatch(type_);
  }

 private:
  const RowType& type_;
  const agg::KeyCodec& codec_;
  runtime::Output* output_;
  RowBatch batch_;
};

}  // namespace

// ---- FinalResultOperator ------------------------------------------------------------------------------

struct FinalResultOperator::Impl {
  explicit Impl(RowType t) : type(std::move(t)), codec(agg::rowCodec(type)) {}
  RowType type;
  agg::KeyCodec codec;
  std::unordered_map<std::string, size_t> index;  ///< row bytes -> position in `rows`
  std::vector<std::pair<std::string, int64_t>> rows;  ///< first-seen order, with the row's multiplicity
  std::optional<runtime::Watermark> watermark;
  std::string buf;
};

FinalResultOperator::FinalResultOperator(RowType type) : impl_(std::make_unique<Impl>(std::move(type))) {}
FinalResultOperator::~FinalResultOperator() = default;

void FinalResultOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  for (size_t r = 0; r < batch.numRows(); ++r) {
    s.codec.encode(batch, r, s.buf);
    const RowKind kind = batch.kind(r);
    const int64_t delta = kind == RowKind::kInsert || kind == RowKind::kUpdateAfter ? 1 : -1;
    auto [it, fresh] = s.index.try_emplace(s.buf, s.rows.size());
    if (fresh) s.rows.emplace_back(s.buf, 0);
    s.rows[it->second].second += delta;
  }
}

void FinalResultOperator::processWatermark(runtime::Watermark mark) {
  if (!impl_->watermark || mark.timestamp > impl_->watermark->timestamp) impl_->watermark = mark;
}

void FinalResultOperator::endInput() {
  Impl& s = *impl_;
  RowEmitter out(s.type, s.codec, output_);
  for (const auto& [row, count] : s.rows) {
    SLUICE_CHECK(count >= 0, "the changelog in front of FinalResult retracted a row it never added ({} times)",
                 -count);
    for (int64_t i = 0; i < count; ++i) out.add(row);
  }
  out.flush();
  s.rows.clear();
  s.index.clear();
  if (s.watermark) output_->emitWatermark(*s.watermark);
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeFinalResultFactory(RowType type) {
  return runtime::makeOperatorFactory([type = std::move(type)]() -> std::unique_ptr<runtime::StreamOperator> {
    return std::make_unique<FinalResultOperator>(type);
  });
}

// ---- BatchSortOperator --------------------------------------------------------------------------------

struct BatchSortOperator::Impl {
  Impl(RowType t, std::vector<SortField> order, int64_t off, int64_t f)
      : type(std::move(t)), codec(agg::rowCodec(type)), sort(type, std::move(order)), offset(off), fetch(f) {
    SLUICE_USER_CHECK(offset >= 0, "OFFSET must not be negative, got {}", offset);
  }
  RowType type;
  agg::KeyCodec codec;
  SortKeyCodec sort;
  int64_t offset;
  int64_t fetch;  ///< < 0: no LIMIT
  /// Sort key -> row; equal keys keep insertion (arrival) order in a multimap.
  std::multimap<std::string, std::string> rows;
  std::optional<runtime::Watermark> watermark;
  std::string key_buf, row_buf;
};

BatchSortOperator::BatchSortOperator(RowType type, std::vector<SortField> order, int64_t offset, int64_t fetch)
    : impl_(std::make_unique<Impl>(std::move(type), std::move(order), offset, fetch)) {}
BatchSortOperator::~BatchSortOperator() = default;

void BatchSortOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  const bool limited = s.fetch >= 0;
  const size_t keep = limited ? static_cast<size_t>(s.offset + s.fetch) : 0;
  for (size_t r = 0; r < batch.numRows(); ++r) {
    if (batch.kind(r) != RowKind::kInsert && batch.kind(r) != RowKind::kUpdateAfter)
      throw UserError("Sort in BATCH mode takes insert-only input, but got a retraction");
    s.sort.encode(batch, r, s.key_buf);
    if (limited && s.rows.size() >= keep) {
      // Full: a row enters only when it sorts strictly before the last kept one.
      if (keep == 0 || !(s.key_buf < std::prev(s.rows.end())->first)) continue;
      s.codec.encode(batch, r, s.row_buf);
      s.rows.emplace(s.key_buf, s.row_buf);
      s.rows.erase(std::prev(s.rows.end()));
      continue;
    }
    s.codec.encode(batch, r, s.row_buf);
    s.rows.emplace(s.key_buf, s.row_buf);
  }
}

void BatchSortOperator::processWatermark(runtime::Watermark mark) {
  if (!impl_->watermark || mark.timestamp > impl_->watermark->timestamp) impl_->watermark = mark;
}

void BatchSortOperator::endInput() {
  Impl& s = *impl_;
  RowEmitter out(s.type, s.codec, output_);
  int64_t position = 0;
  for (const auto& [key, row] : s.rows) {
    if (position++ < s.offset) continue;
    if (s.fetch >= 0 && position > s.offset + s.fetch) break;
    out.add(row);
  }
  out.flush();
  s.rows.clear();
  if (s.watermark) output_->emitWatermark(*s.watermark);
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeBatchSortFactory(RowType type, std::vector<SortField> order,
                                                                           int64_t offset, int64_t fetch) {
  BatchSortOperator probe(type, order, offset, fetch);
  return runtime::makeOperatorFactory(
      [type = std::move(type), order = std::move(order), offset, fetch]() -> std::unique_ptr<runtime::StreamOperator> {
        return std::make_unique<BatchSortOperator>(type, order, offset, fetch);
      });
}

}  // namespace sluice::table

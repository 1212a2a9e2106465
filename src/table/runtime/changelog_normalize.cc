#include "table/runtime/changelog_normalize.h"

#include <string>
#include <unordered_map>

#include "common/error.h"
#include "table/runtime/accumulators_internal.h"

namespace sluice::table {

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {
std::vector<int> allColumns(const RowType& t) {
  std::vector<int> out;
  for (size_t i = 0; i < t.size(); ++i) out.push_back(static_cast<int>(i));
  return out;
}
}  // namespace

struct ChangelogNormalizeOperator::Impl {
  Impl(const RowType& type, std::vector<int> key_columns) : keys(type, std::move(key_columns)), rows(type, allColumns(type)) {}

  agg::KeyCodec keys;
  agg::KeyCodec rows;  // the whole row, encoded: stored per key, compared for duplicates, decoded to emit
  std::unordered_map<std::string, std::string> state;
  std::string key_buf;
  std::string row_buf;
};

ChangelogNormalizeOperator::ChangelogNormalizeOperator(RowType row_type, std::vector<int> key_columns)
    : row_type_(std::move(row_type)) {
  if (key_columns.empty()) throw UserError("ChangelogNormalize needs a primary key");
  impl_ = std::make_unique<Impl>(row_type_, std::move(key_columns));
}

ChangelogNormalizeOperator::~ChangelogNormalizeOperator() = default;

size_t ChangelogNormalizeOperator::numKeys() const { return impl_->state.size(); }

void ChangelogNormalizeOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  RowBatch out(row_type_);
  auto emitStored = [&](const std::string& stored, RowKind kind) {
    s.rows.decodeAppend(stored, out, 0);
    out.kinds().push_back(kind);
  };
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const RowKind kind = batch.kind(row);
    if (kind == RowKind::kUpdateBefore) continue;
    s.keys.encode(batch, row, s.key_buf);
    auto it = s.state.find(s.key_buf);
    if (kind == RowKind::kDelete) {
      if (it == s.state.end()) continue;
      emitStored(it->second, RowKind::kDelete);
      s.state.erase(it);
      continue;
    }
    s.rows.encode(batch, row, s.row_buf);
    if (it == s.state.end()) {
      out.appendRow(batch, row, RowKind::kInsert);
      s.state.emplace(s.key_buf, s.row_buf);
    } else if (it->second != s.row_buf) {
      emitStored(it->second, RowKind::kUpdateBefore);
      out.appendRow(batch, row, RowKind::kUpdateAfter);
      it->second = s.row_buf;
    }
  }
  if (!out.empty()) output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeChangelogNormalizeFactory(RowType row_type,
                                                                                    std::vector<int> key_columns) {
  ChangelogNormalizeOperator probe(row_type, key_columns);
  return runtime::makeOperatorFactory([row_type = std::move(row_type), key_columns = std::move(key_columns)] {
    return std::make_unique<ChangelogNormalizeOperator>(row_type, key_columns);
  });
}

}  // namespace sluice::table

#include "table/runtime/changelog_normalize.h"

#include <string>

#include "common/error.h"
#include "runtime/network/record_writer.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/state_retention.h"

namespace sluice::table {

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {
using RowState = runtime::state::ValueState<std::string>;
// ProcTimeDeduplicateKeepLastRowFunction's state of the last row.
constexpr const char* kRowStateName = "deduplicate-state";
}  // namespace

struct ChangelogNormalizeOperator::Impl {
  Impl(const RowType& type, std::vector<int> key_columns) : keys(type, std::move(key_columns)), rows(agg::rowCodec(type)) {}

  agg::KeyCodec keys;
  agg::KeyCodec rows;  // the whole row, encoded: stored per key, compared for duplicates, decoded to emit
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;  ///< when ctx.state is null
  runtime::state::KeyedStateBackend* backend = nullptr;
  RowState* state = nullptr;
  std::unique_ptr<StateRetention> retention;  ///< table.exec.state.ttl > 0
  std::vector<uint64_t> hashes;
  std::string key_buf;
  std::string row_buf;
};

ChangelogNormalizeOperator::ChangelogNormalizeOperator(RowType row_type, std::vector<int> key_columns,
                                                       int64_t state_ttl_ms)
    : row_type_(std::move(row_type)) {
  if (key_columns.empty()) throw UserError("ChangelogNormalize needs a primary key");
  impl_ = std::make_unique<Impl>(row_type_, std::move(key_columns));
  if (state_ttl_ms > 0) impl_->retention = std::make_unique<StateRetention>(state_ttl_ms, kRowStateName);
}

ChangelogNormalizeOperator::~ChangelogNormalizeOperator() = default;

size_t ChangelogNormalizeOperator::numKeys() const { return impl_->state ? impl_->state->size() : 0; }

void ChangelogNormalizeOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  s.state = &s.backend->getValueState(runtime::state::ValueStateDescriptor<std::string>{kRowStateName});
  if (s.retention) s.retention->open(ctx_, *s.backend, [&s] { s.state->clear(); });
  if (!sc.isRestored()) return;
  s.state->forEachKey([&](std::string_view key, int32_t key_group, std::string_view, std::string& stored) {
    if (!s.keys.isValid(key)) {
      internal::rethrowRestoreError(sc, kRowStateName, key_group, InputError("a key does not decode"));
    }
    if (!s.rows.isValid(stored)) {
      internal::rethrowRestoreError(sc, kRowStateName, key_group,
                                    InputError(fmt::format("a row does not decode as {} columns", row_type_.size())));
    }
  });
}

void ChangelogNormalizeOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.state != nullptr, "ChangelogNormalize used before open()");
  RowBatch out(row_type_);
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  auto emitStored = [&](const std::string& stored, RowKind kind) {
    s.rows.decodeAppend(stored, out, 0);
    out.kinds().push_back(kind);
  };
  const int64_t now = s.retention ? s.retention->now() : 0;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const RowKind kind = batch.kind(row);
    if (kind == RowKind::kUpdateBefore) continue;
    s.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    if (s.retention) s.retention->expireIfDue(now);
    std::string* stored = s.state->value();
    if (kind == RowKind::kDelete) {
      if (stored == nullptr) continue;
      emitStored(*stored, RowKind::kDelete);
      s.state->clear();
      if (s.retention) s.retention->forget();
      continue;
    }
    // ProcTimeDeduplicateKeepLastRowFunction writes every row, an unchanged one too.
    if (s.retention) s.retention->touch(now);
    s.rows.encode(batch, row, s.row_buf);
    if (stored == nullptr) {
      out.appendRow(batch, row, RowKind::kInsert);
      s.state->update(s.row_buf);
    } else if (*stored != s.row_buf) {
      emitStored(*stored, RowKind::kUpdateBefore);
      out.appendRow(batch, row, RowKind::kUpdateAfter);
      stored->assign(s.row_buf);
    }
  }
  if (!out.empty()) output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeChangelogNormalizeFactory(RowType row_type,
                                                                                    std::vector<int> key_columns,
                                                                                    int64_t state_ttl_ms) {
  ChangelogNormalizeOperator probe(row_type, key_columns, state_ttl_ms);
  return runtime::makeOperatorFactory([row_type = std::move(row_type), key_columns = std::move(key_columns),
                                       state_ttl_ms] {
    return std::make_unique<ChangelogNormalizeOperator>(row_type, key_columns, state_ttl_ms);
  });
}

}  // namespace sluice::table

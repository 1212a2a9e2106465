#include "table/runtime/deduplicate_operator.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "runtime/operators/keyed_input_sorter.h"
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
/// The kept row's row time (ms) and its KeyCodec bytes.
using Kept = std::pair<int64_t, std::string>;
using KeptState = runtime::state::ValueState<Kept>;
constexpr const char* kStateName = "deduplicate-state";
}  // namespace

struct DeduplicateOperator::Impl {
  Impl(const RowType& in, RankSpec s) : input_type(in), spec(std::move(s)), keys(in, spec.partition_keys), rows(agg::rowCodec(in)) {}

  RowType input_type;
  RankSpec spec;
  agg::KeyCodec keys;
  agg::KeyCodec rows;
  int rowtime_column = -1;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  KeptState* state = nullptr;
  std::unique_ptr<StateRetention> retention;  ///< table.exec.state.ttl > 0
  std::vector<uint64_t> hashes;
  std::string key_buf, row_buf;
};

DeduplicateOperator::DeduplicateOperator(RowType input_type, RankSpec spec) {
  impl_ = std::make_unique<Impl>(input_type, std::move(spec));
  if (impl_->spec.state_ttl_ms > 0) impl_->retention = std::make_unique<StateRetention>(impl_->spec.state_ttl_ms, kStateName);
  if (impl_->spec.rowtime) {
    SLUICE_USER_CHECK(impl_->spec.order.size() == 1, "row-time deduplication needs one ORDER BY column");
    const int c = impl_->spec.order[0].column;
    SLUICE_USER_CHECK(c >= 0 && static_cast<size_t>(c) < input_type.size(), "row-time column {} out of range", c);
    SLUICE_USER_CHECK(input_type.types[static_cast<size_t>(c)].isTimestampFamily(),
                      "row-time column {} is not a TIMESTAMP", c);
    impl_->rowtime_column = c;
  }
}

DeduplicateOperator::~DeduplicateOperator() = default;

size_t DeduplicateOperator::numKeys() const { return impl_->state ? impl_->state->size() : 0; }

void DeduplicateOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  s.state = &s.backend->getValueState(runtime::state::ValueStateDescriptor<Kept>{kStateName});
  if (s.retention) s.retention->open(ctx_, *s.backend, [&s] { s.state->clear(); });
  if (!sc.isRestored()) return;
  const bool keeps_rows = s.spec.rowtime || s.spec.keep_last;
  s.state->forEachKey([&](std::string_view key, int32_t key_group, std::string_view, Kept& kept) {
    if (!s.keys.isValid(key)) internal::rethrowRestoreError(sc, kStateName, key_group, InputError("a key does not decode"));
    if (keeps_rows && !s.rows.isValid(kept.second))
      internal::rethrowRestoreError(sc, kStateName, key_group,
                                    InputError(fmt::format("a row does not decode as {} columns", s.input_type.size())));
  });
}

void DeduplicateOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.state != nullptr, "Deduplicate used before open()");
  RowBatch out(s.input_type);
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  const int64_t now = s.retention ? s.retention->now() : 0;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const RowKind kind = batch.kind(row);
    if (kind != RowKind::kInsert)
      throw UserError(fmt::format("operator '{}': Deduplicate takes an insert-only input but got {}", ctx_.operator_name,
                                  types::shortString(kind)));
    s.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    if (s.retention) s.retention->expireIfDue(now);
    Kept* kept = s.state->value();
    if (!s.spec.rowtime && !s.spec.keep_last) {
      // ProcTimeDeduplicateKeepFirstRowFunction: only the key's presence is kept.
      if (kept != nullptr) continue;
      s.state->update(Kept{0, std::string()});
      if (s.retention) s.retention->touch(now);
      out.appendRow(batch, row, RowKind::kInsert);
      continue;
    }
    int64_t time = 0;
    if (s.spec.rowtime) {
      const types::Column& c = batch.column(static_cast<size_t>(s.rowtime_column));
      if (c.isNull(row))
        throw UserError(fmt::format("operator '{}': the row time of a row to deduplicate is NULL", ctx_.operator_name));
      time = c.getLong(row);
      // RowTimeDeduplicateFunction.isDuplicate: a later-or-equal row replaces the last one, a strictly
      // earlier row the first one.
      if (kept != nullptr && (s.spec.keep_last ? time < kept->first : time >= kept->first)) continue;
    }
    s.rows.encode(batch, row, s.row_buf);
    if (kept == nullptr) {
      out.appendRow(batch, row, RowKind::kInsert);
      s.state->update(Kept{time, s.row_buf});
    } else {
      s.rows.decodeAppend(kept->second, out, 0);
      out.kinds().push_back(RowKind::kUpdateBefore);
      out.appendRow(batch, row, RowKind::kUpdateAfter);
      kept->first = time;
      kept->second = s.row_buf;
    }
    // Only a kept row writes the state (OnCreateAndWrite): a dropped duplicate does not extend it.
    if (s.retention) s.retention->touch(now);
  }
  if (!out.empty()) output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeDeduplicateFactory(RowType input_type, RankSpec spec) {
  DeduplicateOperator probe(input_type, spec);
  // Sorted by the partition keys in BATCH mode and during backlog (FLIP-327); a key's rows keep their order.
  std::vector<int> keys = spec.partition_keys;
  return runtime::makeKeyedRowOperatorFactory(
      [input_type, spec = std::move(spec)] { return std::make_unique<DeduplicateOperator>(input_type, spec); },
      input_type, std::move(keys));
}

}  // namespace sluice::table

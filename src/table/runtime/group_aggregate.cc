#include "table/runtime/group_aggregate.h"

#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "runtime/operators/keyed_input_sorter.h"
#include "runtime/network/record_writer.h"
#include "runtime/time/processing_time_service.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/state_retention.h"

namespace sluice::table {

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {
using AccState = runtime::state::ValueState<agg::Accumulators, agg::AccumulatorsSerializer>;
constexpr const char* kAccStateName = "accState";  // GroupAggFunction's accumulator state
}  // namespace

struct GroupAggregateOperator::Impl {
  Impl(const RowType& input_type, std::vector<int> group_keys, const std::vector<AggregateCall>& calls,
       bool generate_ub, MiniBatchSpec mb, int64_t ttl_ms)
      : keys(input_type, std::move(group_keys)),
        handler(input_type, calls, /*with_retraction=*/true),
        generate_update_before(generate_ub),
        mini_batch(mb),
        bundle(input_type),
        retention(ttl_ms > 0 ? std::make_unique<StateRetention>(ttl_ms, "accState") : nullptr) {}

  /// Emits the change of one key from `prev` (absent when `first_row`) to the current accumulators, or
  /// clears the key when its record count is 0 (GroupAggFunction / MiniBatchGroupAggFunction).
  void emitChange(const RowBatch& in, size_t row, bool first_row, agg::Accumulators& acc, RowBatch& out) {
    if (acc.record_count != 0) {
      handler.getValue(acc, next);
      if (first_row) {
        appendRow(in, row, next, RowKind::kInsert, out);
      } else if (!handler.equal(prev, next)) {
        if (generate_update_before) appendRow(in, row, prev, RowKind::kUpdateBefore, out);
        appendRow(in, row, next, RowKind::kUpdateAfter, out);
      }
    } else {
      if (!first_row) appendRow(in, row, prev, RowKind::kDelete, out);
      acc_state->clear();
      if (retention) retention->forget();
      return;
    }
    if (retention) retention->touch(now);
  }

  void appendRow(const RowBatch& in, size_t row, const std::vector<agg::AggValue>& values, RowKind kind,
                 RowBatch& out) const {
    // The input row carries the same key values as its group, so the key is copied from it.
    const auto& key_columns = keys.keyColumns();
    for (size_t i = 0; i < key_columns.size(); ++i) {
      out.column(i).appendFrom(in.column(static_cast<size_t>(key_columns[i])), row);
    }
    handler.appendValues(values, out, key_columns.size());
    out.kinds().push_back(kind);
  }

  agg::KeyCodec keys;
  agg::AggsHandler handler;
  bool generate_update_before;
  bool emit_empty_group = false;  ///< BATCH global aggregate: the empty group's row at the end
  MiniBatchSpec mini_batch;
  RowBatch bundle;           ///< mini-batch: the rows waiting, in arrival order
  bool timer_pending = false;  ///< mini-batch: a latency timer is registered for the current bundle
  uint64_t bundle_generation = 0;  ///< mini-batch: bumped per finished bundle, so an older bundle's timer is void
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;  ///< when ctx.state is null
  runtime::state::KeyedStateBackend* backend = nullptr;
  AccState* acc_state = nullptr;
  std::unique_ptr<StateRetention> retention;  ///< table.exec.state.ttl > 0
  int64_t now = 0;                            ///< retention: processing time of the batch being applied
  // Reused buffers.
  std::vector<uint64_t> hashes;
  std::string key_buf;
  std::vector<agg::AggValue> prev;
  std::vector<agg::AggValue> next;
};

RowType GroupAggregateOperator::outputType(const RowType& input_type, const std::vector<int>& group_keys,
                                           const std::vector<AggregateCall>& calls) {
  return agg::keysAndAggregatesType(input_type, group_keys, calls, true);
}

GroupAggregateOperator::GroupAggregateOperator(RowType input_type, std::vector<int> group_keys,
                                               std::vector<AggregateCall> calls, bool generate_update_before,
                                               MiniBatchSpec mini_batch, int64_t state_ttl_ms, bool emit_empty_group)
    : output_type_(outputType(input_type, group_keys, calls)),
      impl_(std::make_unique<Impl>(input_type, std::move(group_keys), calls, generate_update_before, mini_batch,
                                   state_ttl_ms)) {
  impl_->emit_empty_group = emit_empty_group && impl_->keys.keyColumns().empty();
  if (mini_batch.enabled() && mini_batch.latency_ms < 0)
    throw UserError("the mini-batch latency (table.exec.mini-batch.allow-latency) must not be negative");
}

GroupAggregateOperator::~GroupAggregateOperator() = default;

size_t GroupAggregateOperator::numKeys() const { return impl_->acc_state ? impl_->acc_state->size() : 0; }

void GroupAggregateOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  s.acc_state = &s.backend->getValueState(
      runtime::state::ValueStateDescriptor<agg::Accumulators, agg::AccumulatorsSerializer>{kAccStateName});
  if (s.retention) s.retention->open(ctx_, *s.backend, [&s] { s.acc_state->clear(); });
  if (!sc.isRestored()) return;
  s.acc_state->forEachKey([&](std::string_view, int32_t key_group, std::string_view, agg::Accumulators& acc) {
    try {
      s.handler.checkLayout(acc);
    } catch (const InputError& e) {
      internal::rethrowRestoreError(sc, kAccStateName, key_group, e);
    }
  });
}

void GroupAggregateOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.acc_state != nullptr, "GroupAggregate used before open()");
  if (!s.mini_batch.enabled()) {
    applyRows(batch);
    return;
  }
  auto* pts = ctx_.processing_time_service;
  // Flink's CountBundleTrigger: the bundle is finished as the row that fills it arrives; the first row of a
  // bundle starts its latency timer.
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (s.bundle.numRows() == 0 && !s.timer_pending && s.mini_batch.latency_ms > 0 && pts != nullptr) {
      s.timer_pending = true;
      pts->registerTimer(pts->currentProcessingTime() + s.mini_batch.latency_ms,
                         [this, generation = s.bundle_generation](int64_t) {
                           if (generation == impl_->bundle_generation) finishBundle();
                         });
    }
    s.bundle.appendRow(batch, row);
    if (static_cast<int64_t>(s.bundle.numRows()) >= s.mini_batch.size) finishBundle();
  }
}

void GroupAggregateOperator::applyRows(const RowBatch& batch) {
  Impl& s = *impl_;
  RowBatch out(output_type_);
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  if (s.retention) s.now = s.retention->now();
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const bool accumulate = types::isAccumulate(batch.kind(row));
    s.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    if (s.retention) s.retention->expireIfDue(s.now);
    agg::Accumulators* found = s.acc_state->value();
    bool first_row = false;
    if (found == nullptr) {
      // GroupAggFunction: no accumulator is created for a retraction (first message of the key, or
      // after the key's state was cleared).
      if (!accumulate) continue;
      found = &s.acc_state->valueOrInsert();
      s.handler.init(*found);
      first_row = true;
    } else {
      s.handler.getValue(*found, s.prev);
    }
    if (accumulate) s.handler.accumulate(*found, batch, row);
    else s.handler.retract(*found, batch, row);
    // RecordCounter: the count of accumulated minus retracted rows tells whether the key is empty.
    s.emitChange(batch, row, first_row, *found, out);
  }
  if (!out.empty()) output_->collect(std::move(out));
}

void GroupAggregateOperator::finishBundle() {
  Impl& s = *impl_;
  if (s.bundle.numRows() == 0) return;
  ++s.bundle_generation;
  s.timer_pending = false;
  RowBatch bundle = std::move(s.bundle);
  s.bundle = RowBatch(bundle.rowType());
  // The rows of each key, keys in the order they first came (MapBundleFunction's LinkedHashMap).
  runtime::hashKeys(bundle, s.keys.keyColumns(), s.hashes);
  std::unordered_map<std::string, size_t> group_of;
  std::vector<std::vector<uint32_t>> groups;
  std::vector<std::string> group_keys;
  for (size_t row = 0; row < bundle.numRows(); ++row) {
    s.keys.encode(bundle, row, s.key_buf);
    auto [it, inserted] = group_of.try_emplace(s.key_buf, groups.size());
    if (inserted) {
      groups.emplace_back();
      group_keys.push_back(s.key_buf);
    }
    groups[it->second].push_back(static_cast<uint32_t>(row));
  }
  RowBatch out(output_type_);
  if (s.retention) s.now = s.retention->now();
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<uint32_t>& rows = groups[g];
    s.backend->setCurrentKey(group_keys[g], internal::keyGroupOf(s.hashes[rows[0]], *s.backend));
    if (s.retention) s.retention->expireIfDue(s.now);
    agg::Accumulators* found = s.acc_state->value();
    size_t first = 0;
    bool first_row = false;
    if (found == nullptr) {
      // MiniBatchGroupAggFunction: leading retractions of a key without state are dropped.
      while (first < rows.size() && !types::isAccumulate(bundle.kind(rows[first]))) ++first;
      if (first == rows.size()) continue;
      found = &s.acc_state->valueOrInsert();
      s.handler.init(*found);
      first_row = true;
    } else {
      s.handler.getValue(*found, s.prev);
    }
    for (size_t i = first; i < rows.size(); ++i) {
      if (types::isAccumulate(bundle.kind(rows[i]))) s.handler.accumulate(*found, bundle, rows[i]);
      else s.handler.retract(*found, bundle, rows[i]);
    }
    s.emitChange(bundle, rows[first], first_row, *found, out);
  }
  if (!out.empty()) output_->collect(std::move(out));
}

void GroupAggregateOperator::processWatermark(runtime::Watermark mark) {
  finishBundle();
  output_->emitWatermark(mark);
}

void GroupAggregateOperator::endInput() {
  finishBundle();
  Impl& s = *impl_;
  if (!s.emit_empty_group) return;
  // The one group of a global aggregate: empty key bytes, the hash over zero columns.
  s.backend->setCurrentKey("", internal::keyGroupOf(runtime::kKeyHashSeed, *s.backend));
  if (s.acc_state->value() != nullptr) return;
  agg::Accumulators empty;
  s.handler.init(empty);
  s.handler.getValue(empty, s.next);
  RowBatch out(output_type_);
  s.handler.appendValues(s.next, out, 0);
  out.kinds().push_back(RowKind::kInsert);
  output_->collect(std::move(out));
}

void GroupAggregateOperator::prepareSnapshotPreBarrier(int64_t) { finishBundle(); }

std::shared_ptr<const runtime::StreamOperatorFactory> makeGroupAggregateFactory(
    RowType input_type, std::vector<int> group_keys, std::vector<AggregateCall> calls,
    bool generate_update_before, MiniBatchSpec mini_batch, int64_t state_ttl_ms, bool emit_empty_group) {
  // Constructing one instance validates the arguments (UserError) before the job starts.
  GroupAggregateOperator probe(input_type, group_keys, calls, generate_update_before, mini_batch, state_ttl_ms);
  // Sorted by the group keys in BATCH mode and during backlog (FLIP-327).
  return runtime::makeKeyedRowOperatorFactory(
      [input_type, group_keys, calls = std::move(calls), generate_update_before, mini_batch, state_ttl_ms,
       emit_empty_group] {
        return std::make_unique<GroupAggregateOperator>(input_type, group_keys, calls, generate_update_before,
                                                        mini_batch, state_ttl_ms, emit_empty_group);
      },
      input_type, group_keys);
}

}  // namespace sluice::table

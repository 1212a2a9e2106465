#include "table/runtime/group_aggregate.h"

#include <string>

#include <fmt/format.h>

#include "runtime/network/record_writer.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"

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
       bool generate_ub)
      : keys(input_type, std::move(group_keys)),
        handler(input_type, calls, /*with_retraction=*/true),
        generate_update_before(generate_ub) {}

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
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;  ///< when ctx.state is null
  runtime::state::KeyedStateBackend* backend = nullptr;
  AccState* acc_state = nullptr;
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
                                               std::vector<AggregateCall> calls, bool generate_update_before)
    : output_type_(outputType(input_type, group_keys, calls)),
      impl_(std::make_unique<Impl>(input_type, std::move(group_keys), calls, generate_update_before)) {}

GroupAggregateOperator::~GroupAggregateOperator() = default;

size_t GroupAggregateOperator::numKeys() const { return impl_->acc_state ? impl_->acc_state->size() : 0; }

void GroupAggregateOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  s.acc_state = &s.backend->getValueState(
      runtime::state::ValueStateDescriptor<agg::Accumulators, agg::AccumulatorsSerializer>{kAccStateName});
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
  RowBatch out(output_type_);
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const bool accumulate = types::isAccumulate(batch.kind(row));
    s.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
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
    agg::Accumulators& acc = *found;
    if (accumulate) s.handler.accumulate(acc, batch, row);
    else s.handler.retract(acc, batch, row);

    // RecordCounter: the count of accumulated minus retracted rows tells whether the key is empty.
    if (acc.record_count != 0) {
      s.handler.getValue(acc, s.next);
      if (first_row) {
        s.appendRow(batch, row, s.next, RowKind::kInsert, out);
      } else if (!s.handler.equal(s.prev, s.next)) {
        if (s.generate_update_before) s.appendRow(batch, row, s.prev, RowKind::kUpdateBefore, out);
        s.appendRow(batch, row, s.next, RowKind::kUpdateAfter, out);
      }
    } else {
      if (!first_row) s.appendRow(batch, row, s.prev, RowKind::kDelete, out);
      s.acc_state->clear();
    }
  }
  if (!out.empty()) output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeGroupAggregateFactory(
    RowType input_type, std::vector<int> group_keys, std::vector<AggregateCall> calls,
    bool generate_update_before) {
  // Constructing one instance validates the arguments (UserError) before the job starts.
  GroupAggregateOperator probe(input_type, group_keys, calls, generate_update_before);
  return runtime::makeOperatorFactory([input_type = std::move(input_type), group_keys = std::move(group_keys),
                                       calls = std::move(calls), generate_update_before] {
    return std::make_unique<GroupAggregateOperator>(input_type, group_keys, calls, generate_update_before);
  });
}

}  // namespace sluice::table

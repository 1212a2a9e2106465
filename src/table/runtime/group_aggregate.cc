#include "table/runtime/group_aggregate.h"

#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "table/runtime/accumulators_internal.h"

namespace sluice::table {

using types::RowBatch;
using types::RowKind;
using types::RowType;

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
  std::unordered_map<std::string, agg::Accumulators> state;
  // Reused buffers.
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

size_t GroupAggregateOperator::numKeys() const { return impl_->state.size(); }

void GroupAggregateOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  RowBatch out(output_type_);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const bool accumulate = types::isAccumulate(batch.kind(row));
    s.keys.encode(batch, row, s.key_buf);
    auto it = s.state.find(s.key_buf);
    bool first_row = false;
    if (it == s.state.end()) {
      // GroupAggFunction: no accumulator is created for a retraction (first message of the key, or
      // after the key's state was cleared).
      if (!accumulate) continue;
      it = s.state.try_emplace(s.key_buf).first;
      s.handler.init(it->second);
      first_row = true;
    } else {
      s.handler.getValue(it->second, s.prev);
    }
    agg::Accumulators& acc = it->second;
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
      s.state.erase(it);
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

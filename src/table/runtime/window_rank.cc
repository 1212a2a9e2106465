#include "table/runtime/window_rank.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/network/record_writer.h"
#include "runtime/state/internal_timer_service.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/sort_key_codec.h"
#include "table/runtime/topn_buffer_internal.h"

namespace sluice::table {

using internal::TopNBuffer;
using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

using BufferState = runtime::state::ValueState<TopNBuffer>;
constexpr const char* kStateName = "window-rank";
constexpr const char* kTimerService = "window-timers";

void encodeWindowEnd(int64_t end, std::string& out) {
  out.resize(8);
  const auto u = static_cast<uint64_t>(end);
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(u >> (56 - 8 * i));
}

void checkArguments(const RowType& input, const RankSpec& spec, int window_end, bool deduplicate) {
  if (spec.type != RankType::kRowNumber)
    throw UserError(fmt::format("{}() function is not supported on Window TopN currently, only ROW_NUMBER() is "
                                "supported.",
                                spec.type == RankType::kRank ? "RANK" : "DENSE_RANK"));
  SLUICE_USER_CHECK(spec.rank_start >= 1 && spec.rank_end >= spec.rank_start, "invalid rank range [{}, {}]",
                    spec.rank_start, spec.rank_end);
  SLUICE_USER_CHECK(window_end >= 0 && static_cast<size_t>(window_end) < input.size(),
                    "window_end column {} out of range (input has {} columns)", window_end, input.size());
  const auto id = input.types[static_cast<size_t>(window_end)].id;
  SLUICE_USER_CHECK(id == types::TypeId::kTimestamp || id == types::TypeId::kBigInt,
                    "window_end column {} must be a TIMESTAMP, but is {}", window_end,
                    input.types[static_cast<size_t>(window_end)].toString());
  if (deduplicate)
    SLUICE_USER_CHECK(spec.rank_start == 1 && spec.rank_end == 1 && spec.order.size() == 1 && !spec.output_rank_number,
                      "a window deduplication keeps rank 1 on one row-time column without the rank number");
}

}  // namespace

struct WindowRankOperator::Impl {
  Impl(const RowType& in, RankSpec s, int end, bool dedup)
      : input_type(in),
        spec(std::move(s)),
        window_end(end),
        ties_first(dedup && spec.keep_last),
        keys(in, spec.partition_keys),
        sort(in, spec.order),
        rows(agg::rowCodec(in)) {}

  /// Adds `row` with sort key `key` to the kept rows if it ranks within rank_end. A deduplication keeping the
  /// last row puts it in front of its ties (a later row of equal row time replaces the kept one).
  void add(TopNBuffer& b, const std::string& key, const std::string& row) const {
    const bool full = static_cast<int64_t>(b.count) >= spec.rank_end;
    if (full) {
      const std::string& worst = b.entries.rbegin()->first;
      if (ties_first ? key > worst : !(key < worst)) return;
    }
    auto& list = b.entries[key];
    if (ties_first) {
      list.insert(list.begin(), row);
    } else {
      list.push_back(row);
    }
    ++b.count;
    if (static_cast<int64_t>(b.count) <= spec.rank_end) return;
    auto last = std::prev(b.entries.end());
    last->second.pop_back();
    if (last->second.empty()) b.entries.erase(last);
    --b.count;
  }

  /// Emits the current key's rows of window `ns` ranked rank_start..rank_end and drops them
  /// (WindowRankProcessor.fireWindow, clearWindow).
  void fire(std::string_view ns, RowBatch& out) {
    state->setCurrentNamespace(ns);
    TopNBuffer* b = state->value();
    if (b == nullptr) return;
    int64_t rank = 1;
    for (const auto& [key, list] : b->entries) {
      for (const std::string& row : list) {
        if (rank > spec.rank_end) break;
        if (rank >= spec.rank_start) {
          rows.decodeAppend(row, out, 0);
          if (spec.output_rank_number) out.column(input_type.size()).appendLong(rank);
          out.kinds().push_back(RowKind::kInsert);
        }
        ++rank;
      }
    }
    state->clear();
  }

  RowType input_type;
  RankSpec spec;
  int window_end;
  bool ties_first;
  agg::KeyCodec keys;
  SortKeyCodec sort;
  agg::KeyCodec rows;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  BufferState* state = nullptr;
  runtime::state::InternalTimerService* timers = nullptr;
  runtime::state::PartitionableListState<int64_t>* watermark_state = nullptr;
  int64_t watermark = std::numeric_limits<int64_t>::min();
  std::vector<uint64_t> hashes;
  std::string key_buf, sort_buf, row_buf, ns_buf;
};

RowType WindowRankOperator::outputType(const RowType& input, const RankSpec& spec) {
  RowType out = input;
  if (spec.output_rank_number) {
    out.names.push_back("w0$o0");
    out.types.push_back(types::LogicalType::bigint(false));
  }
  return out;
}

WindowRankOperator::WindowRankOperator(RowType input_type, RankSpec spec, int window_end, bool deduplicate,
                                       const std::string& time_zone)
    : shift_(time_zone) {
  checkArguments(input_type, spec, window_end, deduplicate);
  impl_ = std::make_unique<Impl>(input_type, std::move(spec), window_end, deduplicate);
}

WindowRankOperator::~WindowRankOperator() = default;

size_t WindowRankOperator::numBufferedRows() const {
  if (impl_->state == nullptr) return 0;
  size_t n = 0;
  impl_->state->forEachKey([&](std::string_view, int32_t, std::string_view, TopNBuffer& b) { n += b.count; });
  return n;
}

void WindowRankOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  namespace st = runtime::state;
  s.state = &s.backend->getValueState(st::ValueStateDescriptor<TopNBuffer>{kStateName});
  s.timers = &s.backend->getInternalTimerService(kTimerService);
  s.watermark_state = &sc.operatorStateBackend().getUnionListState(st::ListStateDescriptor<int64_t>{"watermark"});
  if (!sc.isRestored()) return;
  s.state->forEachKey([&](std::string_view key, int32_t key_group, std::string_view ns, TopNBuffer& b) {
    bool ok = s.keys.isValid(key) && ns.size() == 8;
    for (const auto& [sort_key, list] : b.entries)
      for (const auto& row : list) ok = ok && s.rows.isValid(row);
    if (!ok)
      internal::rethrowRestoreError(sc, kStateName, key_group,
                                    InputError(fmt::format("a row does not decode as {} columns", s.input_type.size())));
  });
  const std::vector<int64_t>& marks = s.watermark_state->get();
  if (!marks.empty()) s.watermark = *std::min_element(marks.begin(), marks.end());
}

void WindowRankOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.state != nullptr, "WindowRank used before open()");
  const types::Column& end_col = batch.column(static_cast<size_t>(s.window_end));
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    if (batch.kind(row) != RowKind::kInsert)
      throw UserError(fmt::format("operator '{}': Window rank does not support input RowKind: {}", ctx_.operator_name,
                                  types::shortString(batch.kind(row))));
    SLUICE_CHECK(!end_col.isNull(row), "WindowRank: NULL window_end");
    const int64_t end = end_col.getLong(row);
    if (shift_.isWindowFired(end, s.watermark)) {
      ++num_late_records_dropped_;
      if (ctx_.metrics != nullptr) ctx_.metrics->num_late_records_dropped.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    s.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    encodeWindowEnd(end, s.ns_buf);
    s.state->setCurrentNamespace(s.ns_buf);
    s.sort.encode(batch, row, s.sort_buf);
    s.rows.encode(batch, row, s.row_buf);
    s.add(s.state->valueOrInsert(), s.sort_buf, s.row_buf);
    s.timers->registerEventTimeTimer(s.ns_buf, shift_.toEpochMillsForTimer(end - 1));
  }
}

void WindowRankOperator::processWatermark(runtime::Watermark mark) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.timers != nullptr, "WindowRank used before open()");
  RowBatch out(outputType(s.input_type, s.spec));
  s.watermark = std::max(s.watermark, mark.timestamp);
  s.timers->advanceWatermark(mark.timestamp,
                             [&](std::string_view, int32_t, std::string_view ns, int64_t) { s.fire(ns, out); });
  if (!out.empty()) output_->collect(std::move(out));
  output_->emitWatermark(mark);
}

void WindowRankOperator::snapshotState(int64_t checkpoint_id) {
  (void)checkpoint_id;
  SLUICE_CHECK(impl_->watermark_state != nullptr, "WindowRank snapshot before open()");
  impl_->watermark_state->update({impl_->watermark});
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeWindowRankFactory(RowType input_type, RankSpec spec,
                                                                            int window_end, bool deduplicate,
                                                                            const std::string& time_zone) {
  WindowRankOperator probe(input_type, spec, window_end, deduplicate, time_zone);
  return runtime::makeOperatorFactory(
      [input_type = std::move(input_type), spec = std::move(spec), window_end, deduplicate, time_zone] {
        return std::make_unique<WindowRankOperator>(input_type, spec, window_end, deduplicate, time_zone);
      });
}

}  // namespace sluice::table

#include "table/runtime/rank_operator.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/operators/keyed_input_sorter.h"
#include "common/error.h"
#include "runtime/network/record_writer.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/sort_key_codec.h"
#include "table/runtime/topn_buffer_internal.h"
#include "table/runtime/state_retention.h"

namespace sluice::table {

using internal::TopNBuffer;
using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {
using BufferState = runtime::state::ValueState<TopNBuffer>;
constexpr const char* kStateName = "topn-buffer";
}  // namespace

struct RankOperator::Impl {
  Impl(const RowType& in, RankSpec s)
      : input_type(in), spec(std::move(s)), keys(in, spec.partition_keys), sort(in, spec.order), rows(agg::rowCodec(in)) {}

  RowType input_type;
  RankSpec spec;
  agg::KeyCodec keys;
  SortKeyCodec sort;
  agg::KeyCodec rows;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  BufferState* state = nullptr;
  std::unique_ptr<StateRetention> retention;  ///< table.exec.state.ttl > 0
  std::vector<uint64_t> hashes;
  std::string key_buf, sort_buf, row_buf;
  RowBatch* out = nullptr;

  bool inRankEnd(int64_t rank) const { return rank <= spec.rank_end; }
  bool inRankRange(int64_t rank) const { return rank <= spec.rank_end && rank >= spec.rank_start; }
  bool withRowNumber() const { return spec.output_rank_number || spec.rank_start > 1; }

  // Flink's AbstractTopNFunction.collect*: the variants with a rank emit only inside the rank range.
  void emit(const std::string& row, RowKind kind, int64_t rank) {
    rows.decodeAppend(row, *out, 0);
    if (spec.output_rank_number) out->column(input_type.size()).appendLong(rank);
    out->kinds().push_back(kind);
  }
  void emitRanked(const std::string& row, RowKind kind, int64_t rank) {
    if (inRankRange(rank)) emit(row, kind, rank);
  }

  /// AppendOnlyTopNHelper.processElementWithRowNumber / RetractableTopNFunction.emitRecordsWithRowNumber,
  /// with `row` already added behind its ties. Returns the first sort key not visited.
  std::map<std::string, std::vector<std::string>>::iterator emitInsertWithRowNumber(TopNBuffer& b,
                                                                                    const std::string& key,
                                                                                    const std::string& row) {
    auto it = b.entries.begin();
    int64_t rank = 0;
    bool found = false;
    const std::string* current = nullptr;
    while (it != b.entries.end() && inRankEnd(rank)) {
      auto& list = it->second;
      if (!found && it->first == key) {
        rank += static_cast<int64_t>(list.size());
        current = &row;
        found = true;
      } else if (found) {
        for (size_t i = 0; i < list.size() && inRankEnd(rank); ++i) {
          emitRanked(list[i], RowKind::kUpdateBefore, rank);
          emitRanked(*current, RowKind::kUpdateAfter, rank);
          current = &list[i];
          rank += 1;
        }
      } else {
        rank += static_cast<int64_t>(list.size());
      }
      ++it;
    }
    if (inRankEnd(rank) && current != nullptr) emitRanked(*current, RowKind::kInsert, rank);
    return it;
  }

  void put(TopNBuffer& b, const std::string& key, const std::string& row) {
    b.entries[key].push_back(row);
    ++b.count;
  }

  // AppendOnlyTopNFunction.processElement.
  void appendOnly(TopNBuffer& b, const std::string& key, const std::string& row) {
    // TopNBuffer.checkSortKeyInBufferRange: better than the worst key, or room left.
    if (!b.entries.empty() && !(key < b.entries.rbegin()->first) &&
        static_cast<int64_t>(b.count) >= spec.rank_end)
      return;
    put(b, key, row);
    if (withRowNumber()) {
      auto rest = emitInsertWithRowNumber(b, key, row);
      for (auto it = rest; it != b.entries.end(); ++it) b.count -= it->second.size();
      b.entries.erase(rest, b.entries.end());
      return;
    }
    if (static_cast<int64_t>(b.count) > spec.rank_end) {
      auto last = std::prev(b.entries.end());
      std::string last_row = last->second.back();
      const size_t size = last->second.size();
      if (size <= 1) {
        b.entries.erase(last);
      } else {
        last->second.pop_back();
      }
      --b.count;
      if (last_row == row) return;  // the new row itself fell out
      emit(last_row, RowKind::kDelete, 0);
    }
    emit(row, RowKind::kInsert, 0);
  }

  // RetractableTopNFunction.emitRecordsWithoutRowNumber, with `row` already added behind its ties.
  void retractableInsertWithoutRowNumber(TopNBuffer& b, const std::string& key, const std::string& row) {
    int64_t rank = 0;
    bool found = false;
    bool collect = false;
    const std::string* to_delete = nullptr;
    for (auto it = b.entries.begin(); it != b.entries.end() && inRankEnd(rank); ++it) {
      const auto& list = it->second;
      const auto count = static_cast<int64_t>(list.size());
      if (!found && it->first == key) {
        rank += count;
        collect = inRankRange(rank);
        found = true;
      } else if (found) {
        if (inRankEnd(rank + count)) {
          rank += count;
        } else {
          to_delete = &list[static_cast<size_t>(spec.rank_end - rank)];
          break;
        }
      } else {
        rank += count;
      }
    }
    if (to_delete != nullptr) emit(*to_delete, RowKind::kDelete, 0);
    if (collect) emit(row, RowKind::kInsert, 0);
  }

  // RetractableTopNFunction.retractRecordWithRowNumber; true when `row` was found (and removed).
  bool retractWithRowNumber(TopNBuffer& b, const std::string& key, const std::string& row) {
    int64_t rank = 0;
    std::string prev;
    bool found = false;
    for (auto it = b.entries.begin(); it != b.entries.end() && inRankEnd(rank); ++it) {
      auto& list = it->second;
      if (!found && it->first == key) {
        for (size_t i = 0; i < list.size() && inRankEnd(rank);) {
          if (!found && list[i] == row) {
            prev = list[i];
            found = true;
            list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
            --b.count;
          } else {
            if (found) {
              emitRanked(prev, RowKind::kUpdateBefore, rank);
              emitRanked(list[i], RowKind::kUpdateAfter, rank);
              prev = list[i];
            }
            ++i;
          }
          rank += 1;
        }
      } else if (found) {
        for (size_t i = 0; i < list.size() && inRankEnd(rank); ++i) {
          emitRanked(prev, RowKind::kUpdateBefore, rank);
          emitRanked(list[i], RowKind::kUpdateAfter, rank);
          prev = list[i];
          rank += 1;
        }
      } else {
        rank += static_cast<int64_t>(list.size());
      }
    }
    // Flink logs a stale-state warning when the row was not found; nothing to delete then.
    if (inRankEnd(rank) && found) emitRanked(prev, RowKind::kDelete, rank);
    return found;
  }

  // RetractableTopNFunction.retractRecordWithoutRowNumber; true when `row` was found (and removed).
  bool retractWithoutRowNumber(TopNBuffer& b, const std::string& key, const std::string& row) {
    int64_t next_rank = 1;
    bool found = false;
    for (auto it = b.entries.begin(); it != b.entries.end() && inRankEnd(next_rank); ++it) {
      auto& list = it->second;
      const auto count = static_cast<int64_t>(list.size());
      if (!found && it->first == key) {
        for (size_t i = 0; i < list.size() && inRankEnd(next_rank);) {
          if (!found && list[i] == row) {
            emitRanked(list[i], RowKind::kDelete, next_rank);
            next_rank -= 1;
            found = true;
            list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
            --b.count;
          } else {
            if (found && next_rank == spec.rank_end) emitRanked(list[i], RowKind::kInsert, next_rank);
            ++i;
          }
          next_rank += 1;
        }
      } else if (found) {
        const int64_t rank_of_last = next_rank + count - 1;
        if (rank_of_last < spec.rank_end) {
          next_rank = rank_of_last + 1;
        } else {
          emit(list[static_cast<size_t>(spec.rank_end - next_rank)], RowKind::kInsert, 0);
          break;
        }
      } else {
        next_rank += count;
      }
    }
    return found;
  }

  // RetractableTopNFunction.processElement.
  void retractable(TopNBuffer& b, const std::string& key, const std::string& row, bool accumulate) {
    if (accumulate) {
      put(b, key, row);
      if (withRowNumber()) {
        emitInsertWithRowNumber(b, key, row);
      } else {
        retractableInsertWithoutRowNumber(b, key, row);
      }
      return;
    }
    const bool removed = withRowNumber() ? retractWithRowNumber(b, key, row) : retractWithoutRowNumber(b, key, row);
    auto it = b.entries.find(key);
    if (it == b.entries.end()) return;
    if (!removed) {
      auto& list = it->second;
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i] == row) {
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
          --b.count;
          break;
        }
      }
    }
    if (it->second.empty()) b.entries.erase(it);
  }
};

RowType RankOperator::outputType(const RowType& input, const RankSpec& spec) {
  RowType out = input;
  if (spec.output_rank_number) {
    out.names.push_back("w0$o0");
    out.types.push_back(types::LogicalType::bigint(false));
  }
  return out;
}

RankOperator::RankOperator(RowType input_type, RankSpec spec) {
  if (spec.type != RankType::kRowNumber)
    throw UserError(fmt::format("{}() on streaming table is not supported currently",
                                spec.type == RankType::kRank ? "RANK" : "DENSE_RANK"));
  if (spec.rank_start < 1 || spec.rank_end < spec.rank_start)
    throw UserError(fmt::format("invalid rank range [{}, {}]", spec.rank_start, spec.rank_end));
  impl_ = std::make_unique<Impl>(input_type, std::move(spec));
  if (impl_->spec.state_ttl_ms > 0) impl_->retention = std::make_unique<StateRetention>(impl_->spec.state_ttl_ms, kStateName);
}

RankOperator::~RankOperator() = default;

size_t RankOperator::numPartitions() const { return impl_->state ? impl_->state->size() : 0; }

void RankOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  s.state = &s.backend->getValueState(runtime::state::ValueStateDescriptor<TopNBuffer>{kStateName});
  if (s.retention) s.retention->open(ctx_, *s.backend, [&s] { s.state->clear(); });
  if (!sc.isRestored()) return;
  s.state->forEachKey([&](std::string_view key, int32_t key_group, std::string_view, TopNBuffer& b) {
    if (!s.keys.isValid(key)) internal::rethrowRestoreError(sc, kStateName, key_group, InputError("a key does not decode"));
    for (const auto& [sort_key, list] : b.entries)
      for (const auto& row : list)
        if (!s.rows.isValid(row))
          internal::rethrowRestoreError(
              sc, kStateName, key_group,
              InputError(fmt::format("a row does not decode as {} columns", s.input_type.size())));
  });
}

void RankOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.state != nullptr, "Rank used before open()");
  RowBatch out(outputType(s.input_type, s.spec));
  s.out = &out;
  runtime::hashKeys(batch, s.keys.keyColumns(), s.hashes);
  const int64_t now = s.retention ? s.retention->now() : 0;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const RowKind kind = batch.kind(row);
    const bool accumulate = kind == RowKind::kInsert || kind == RowKind::kUpdateAfter;
    if (!accumulate && s.spec.strategy == RankStrategy::kAppendFast)
      throw UserError(fmt::format("operator '{}': AppendFastStrategy Top-N got a retraction", ctx_.operator_name));
    s.keys.encode(batch, row, s.key_buf);
    s.backend->setCurrentKey(s.key_buf, internal::keyGroupOf(s.hashes[row], *s.backend));
    if (s.retention) s.retention->expireIfDue(now);
    TopNBuffer* b = s.state->value();
    if (b == nullptr) {
      if (!accumulate) continue;  // nothing of this partition is kept
      b = &s.state->valueOrInsert();
    }
    s.sort.encode(batch, row, s.sort_buf);
    s.rows.encode(batch, row, s.row_buf);
    if (s.spec.strategy == RankStrategy::kAppendFast) {
      s.appendOnly(*b, s.sort_buf, s.row_buf);
    } else {
      s.retractable(*b, s.sort_buf, s.row_buf, accumulate);
    }
    if (b->entries.empty()) {
      s.state->clear();
      if (s.retention) s.retention->forget();
    } else if (s.retention) {
      s.retention->touch(now);
    }
  }
  s.out = nullptr;
  if (!out.empty()) output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeRankFactory(RowType input_type, RankSpec spec) {
  RankOperator probe(input_type, spec);
  // Sorted by the partition keys in BATCH mode and during backlog (FLIP-327).
  std::vector<int> keys = spec.partition_keys;
  return runtime::makeKeyedRowOperatorFactory(
      [input_type, spec = std::move(spec)] { return std::make_unique<RankOperator>(input_type, spec); }, input_type,
      std::move(keys));
}

}  // namespace sluice::table

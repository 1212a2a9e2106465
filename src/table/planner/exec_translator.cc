#include "table/planner/exec_translator.h"

#include <limits>
#include <map>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"
#include "runtime/operators/stream_operator.h"
#include "table/functions/calc_program.h"
#include "table/runtime/batch_operators.h"
#include "table/runtime/calc_operator.h"
#include "table/runtime/changelog_normalize.h"
#include "table/runtime/group_aggregate.h"
#include "table/runtime/interval_join.h"
#include "table/runtime/lookup_join.h"
#include "table/runtime/deduplicate_operator.h"
#include "table/runtime/not_null_enforcer.h"
#include "table/runtime/over_aggregate.h"
#include "table/runtime/rank_operator.h"
#include "table/runtime/temporal_sort.h"
#include "table/runtime/state_retention.h"
#include "table/runtime/replicate_rows.h"
#include "table/runtime/streaming_join.h"
#include "table/runtime/correlate_operator.h"
#include "table/runtime/temporal_join.h"
#include "table/runtime/watermark_assigner.h"
#include "table/runtime/window_aggregate.h"
#include "table/runtime/window_join.h"
#include "table/runtime/window_rank.h"
#include "table/runtime/window_table_function.h"

namespace sluice::table {

namespace {

// Flink's ExecutionConfigOptions.TABLE_EXEC_MINIBATCH_* and OptimizerConfigOptions keys and defaults.
const ConfigOption<bool> kMiniBatchEnabled(
    "table.exec.mini-batch.enabled", ConfigType::kBool, "false",
    "Buffer the input of group aggregations and apply it key by key in bundles (fewer state accesses and "
    "intermediate updates; the same final results).");
const ConfigOption<int64_t> kMiniBatchAllowLatency(
    "table.exec.mini-batch.allow-latency", ConfigType::kDuration, "0 ms",
    "Longest time a row waits in a mini-batch bundle; must be > 0 when mini-batch is enabled.");
const ConfigOption<int64_t> kMiniBatchSize(
    "table.exec.mini-batch.size", ConfigType::kLong, "-1",
    "Most rows in a mini-batch bundle; must be > 0 when mini-batch is enabled.");
const ConfigOption<std::string> kAggPhaseStrategy(
    "table.optimizer.agg-phase-strategy", ConfigType::kEnum, "AUTO",
    "AUTO, ONE_PHASE or TWO_PHASE. Accepted; every group aggregation runs in one phase (same results).",
    {"AUTO", "ONE_PHASE", "TWO_PHASE"});
const ConfigOption<bool> kDistinctAggSplitEnabled(
    "table.optimizer.distinct-agg.split.enabled", ConfigType::kBool, "false",
    "Accepted; distinct aggregates are not split into two levels yet (same results).");
const ConfigOption<int32_t> kDistinctAggSplitBucketNum(
    "table.optimizer.distinct-agg.split.bucket-num", ConfigType::kInt, "1024",
    "Buckets of a split distinct aggregation (accepted; see table.optimizer.distinct-agg.split.enabled).", 1);

MiniBatchSpec miniBatchOf(const Configuration& config) {
  MiniBatchSpec spec;
  if (!config.get(kMiniBatchEnabled)) return spec;
  const int64_t size = config.get(kMiniBatchSize);
  const int64_t latency = config.get(kMiniBatchAllowLatency);
  if (size <= 0)
    throw UserError(fmt::format("MiniBatch Size must be greater than 0: table.exec.mini-batch.size is {} while "
                                "table.exec.mini-batch.enabled is true",
                                size));
  if (latency <= 0)
    throw UserError(fmt::format("MiniBatch Latency must be greater than 0 ms: table.exec.mini-batch.allow-latency is "
                                "{} ms while table.exec.mini-batch.enabled is true",
                                latency));
  spec.size = size;
  spec.latency_ms = latency;
  return spec;
}

class Translator {
 public:
  Translator(const Configuration& config, std::shared_ptr<const runtime::StreamOperatorFactory> collect)
      : default_parallelism_(config.get(options::kParallelismDefault)),
        not_null_drop_(config.get(kSinkNotNullEnforcer) == "DROP"),
        mini_batch_(miniBatchOf(config)),
        state_ttl_ms_(stateTtlOf(config)),
        collect_(std::move(collect)) {}

  graph::TransformationPtr translate(const RelNodePtr& rel) {
    auto it = done_.find(rel.get());
    if (it != done_.end()) return it->second;
    graph::TransformationPtr t = translateNode(*rel);
    if (rel->batch_final) {
      // BATCH: the changelog of the streaming operator folded into its final rows, chained behind it.
      auto final_result = make(graph::TransformationKind::kOneInput, "FinalResult", *rel, {t}, t->parallelism);
      final_result->description = "FinalResult";
      final_result->factory = makeFinalResultFactory(rel->row_type);
      t = final_result;
    }
    done_[rel.get()] = t;
    return t;
  }

 private:
  graph::TransformationPtr make(graph::TransformationKind kind, std::string name, const RelNode& rel,
                                std::vector<graph::TransformationPtr> inputs, int parallelism) {
    auto t = std::make_shared<graph::Transformation>();
    t->id = next_id_++;
    t->kind = kind;
    t->name = std::move(name);
    t->description = rel.describe();
    t->inputs = std::move(inputs);
    t->parallelism = parallelism;
    t->output_type = rel.row_type;
    return t;
  }

  graph::TransformationPtr partition(const graph::TransformationPtr& input, graph::ShipStrategy strategy,
                                     std::vector<int> keys = {}) {
    auto t = std::make_shared<graph::Transformation>();
    t->id = next_id_++;
    t->kind = graph::TransformationKind::kPartition;
    t->name = "Exchange";
    t->inputs = {input};
    t->parallelism = input->parallelism;
    t->output_type = input->output_type;
    t->partitioner.strategy = strategy;
    t->partitioner.key_columns = std::move(keys);
    return t;
  }

  /// The translated input `i` of `rel`. Leaving a source block that runs at its own parallelism goes
  /// through a REBALANCE exchange, so downstream keeps the default parallelism (FLIP-367).
  graph::TransformationPtr input(const RelNode& rel, size_t i) {
    const RelNodePtr& in_rel = rel.inputs[i];
    graph::TransformationPtr in = translate(in_rel);
    if (in_rel->kind == RelKind::kTableSourceScan && in_rel->producesUpdates() && in_rel->parallelism > 0) {
      // FLIP-367: a changelog source with a configured parallelism is always hashed on its primary key
      // (physical row indexes), even when its parallelism equals the default.
      SLUICE_CHECK(!in_rel->primary_key.empty(), "changelog source '{}' without primary key", in_rel->table_name);
      auto ex = partition(in, graph::ShipStrategy::kHash, in_rel->primary_key);
      ex->parallelism = -1;
      return ex;
    }
    if (!rel.in_source_block && in_rel->in_source_block && in->parallelism > 0 &&
        in->parallelism != default_parallelism_) {
      auto ex = partition(in, graph::ShipStrategy::kRebalance);
      ex->parallelism = -1;
      return ex;
    }
    return in;
  }

  graph::TransformationPtr translateNode(const RelNode& rel) {
    switch (rel.kind) {
      case RelKind::kTableSourceScan: {
        auto src = make(graph::TransformationKind::kSource, rel.table_name, rel, {}, rel.parallelism);
        src->factory = rel.source->operatorFactory();
        return src;
      }
      case RelKind::kCalc: {
        auto in = input(rel, 0);
        auto program = std::make_shared<CalcProgram>(rel.inputs[0]->row_type, rel.condition, rel.projections,
                                                     rel.row_type.names);
        auto t = make(graph::TransformationKind::kOneInput, "Calc", rel, {in}, in->parallelism);
        t->factory = makeCalcOperatorFactory(program);
        return t;
      }
      case RelKind::kWatermarkAssigner: {
        auto in = input(rel, 0);
        auto t = make(graph::TransformationKind::kOneInput, "WatermarkAssigner", rel, {in}, in->parallelism);
        // The watermark value is an extra last input column; forward only the table's columns.
        std::vector<int> keep;
        for (size_t i = 0; i < rel.row_type.size(); ++i) keep.push_back(static_cast<int>(i));
        t->factory = makeWatermarkAssignerFactory(rel.rowtime_index, rel.watermark_index, keep);
        return t;
      }
      case RelKind::kGroupAggregate:
      case RelKind::kWindowAggregate: {
        auto in = input(rel, 0);
        const auto& in_type = rel.inputs[0]->row_type;
        bool global = rel.group_keys.empty();
        auto ex = global ? partition(in, graph::ShipStrategy::kGlobal)
                         : partition(in, graph::ShipStrategy::kHash, rel.group_keys);
        int p = global ? 1 : -1;
        if (rel.kind == RelKind::kGroupAggregate) {
          auto t = make(graph::TransformationKind::kOneInput, "GroupAggregate", rel, {ex}, p);
          // BATCH (batch_final): a global aggregate has its one row even over no input.
          t->factory = makeGroupAggregateFactory(in_type, rel.group_keys, rel.aggregates, true, mini_batch_,
                                               state_ttl_ms_, rel.batch_final && global);
          return t;
        }
        auto t = make(graph::TransformationKind::kOneInput, rel.group_window ? "GroupWindowAggregate" : "WindowAggregate",
                      rel, {ex}, p);
        t->factory = makeWindowAggregateFactory(in_type, rel.window, rel.group_keys, rel.aggregates);
        return t;
      }
      case RelKind::kChangelogNormalize: {
        // Keyed by the primary key: one HASH exchange from the source (it also serves FLIP-367).
        auto ex = partition(translate(rel.inputs[0]), graph::ShipStrategy::kHash, rel.group_keys);
        ex->parallelism = -1;
        auto t = make(graph::TransformationKind::kOneInput, "ChangelogNormalize", rel, {ex}, -1);
        t->factory = makeChangelogNormalizeFactory(rel.row_type, rel.group_keys, state_ttl_ms_);
        return t;
      }
      case RelKind::kRank:
        if (rel.rank.batch_sort) {
          // Flink's BatchExecSort / BatchExecSortLimit: every row to one subtask, sorted at the end of input.
          auto ex = partition(input(rel, 0), graph::ShipStrategy::kGlobal);
          const RankSpec& r = rel.rank;
          const bool limited = r.rank_end != std::numeric_limits<int64_t>::max();
          auto t = make(graph::TransformationKind::kOneInput,
                        r.form == RankForm::kSort ? "Sort" : r.form == RankForm::kSortLimit ? "SortLimit" : "Limit",
                        rel, {ex}, 1);
          t->factory = makeBatchSortFactory(rel.inputs[0]->row_type, r.order, r.rank_start - 1,
                                            limited ? r.rank_end - r.rank_start + 1 : -1);
          return t;
        }
        if (rel.rank.form == RankForm::kTemporalSort) {
          // Flink's StreamExecTemporalSort: every row to one subtask.
          auto ex = partition(input(rel, 0), graph::ShipStrategy::kGlobal);
          auto t = make(graph::TransformationKind::kOneInput, "TemporalSort", rel, {ex}, 1);
          t->factory = makeTemporalSortFactory(rel.inputs[0]->row_type, rel.rank.order, rel.rank.rowtime);
          return t;
        }
        [[fallthrough]];
      case RelKind::kDeduplicate: {
        // Flink's StreamExecRank / StreamExecDeduplicate: HASH on the partition keys, or one subtask
        // behind a GLOBAL exchange when there are none.
        auto in = input(rel, 0);
        const auto& in_type = rel.inputs[0]->row_type;
        bool global = rel.rank.partition_keys.empty();
        auto ex = global ? partition(in, graph::ShipStrategy::kGlobal)
                         : partition(in, graph::ShipStrategy::kHash, rel.rank.partition_keys);
        const bool dedup = rel.kind == RelKind::kDeduplicate;
        std::string name = dedup ? "Deduplicate" : rel.rank.form == RankForm::kRank ? "Rank"
                                               : rel.rank.form == RankForm::kSortLimit ? "SortLimit" : "Limit";
        auto t = make(graph::TransformationKind::kOneInput, name, rel, {ex}, global ? 1 : -1);
        RankSpec spec = rel.rank;
        spec.state_ttl_ms = state_ttl_ms_;
        t->factory = dedup ? makeDeduplicateFactory(in_type, spec) : makeRankFactory(in_type, spec);
        return t;
      }
      case RelKind::kWindowRank:
      case RelKind::kWindowDeduplicate: {
        // Flink's StreamExecWindowRank / StreamExecWindowDeduplicate: HASH on the partition keys other than
        // window_start / window_end, or one subtask behind a GLOBAL exchange when there are none.
        auto in = input(rel, 0);
        const bool global = rel.rank.partition_keys.empty();
        auto ex = global ? partition(in, graph::ShipStrategy::kGlobal)
                         : partition(in, graph::ShipStrategy::kHash, rel.rank.partition_keys);
        const bool dedup = rel.kind == RelKind::kWindowDeduplicate;
        auto t = make(graph::TransformationKind::kOneInput, dedup ? "WindowDeduplicate" : "WindowRank", rel, {ex},
                      global ? 1 : -1);
        t->factory = makeWindowRankFactory(rel.inputs[0]->row_type, rel.rank, rel.window_rank_cols[1], dedup,
                                           rel.window.time_zone);
        return t;
      }
      case RelKind::kOverAggregate: {
        // Flink's StreamExecOverAggregate: keyed by the partition keys, or one subtask without them.
        auto in = input(rel, 0);
        const bool global = rel.over.partition_keys.empty();
        auto ex = global ? partition(in, graph::ShipStrategy::kGlobal)
                         : partition(in, graph::ShipStrategy::kHash, rel.over.partition_keys);
        auto t = make(graph::TransformationKind::kOneInput, "OverAggregate", rel, {ex}, global ? 1 : -1);
        t->factory = makeOverAggregateFactory(rel.inputs[0]->row_type, rel.over);
        return t;
      }
      case RelKind::kJoin:
      case RelKind::kTemporalJoin: {
        // Flink's StreamExecJoin: both inputs hash-partitioned on their join keys into one two-input operator
        // at the default parallelism; the left input's edges come first.
        // An input that already ends in an exchange (leaving a source block) is re-partitioned instead.
        auto unexchanged = [&](size_t i) {
          graph::TransformationPtr in = input(rel, i);
          return in->kind == graph::TransformationKind::kPartition ? in->inputs[0] : in;
        };
        auto left = partition(unexchanged(0), graph::ShipStrategy::kHash, rel.join.left_keys);
        auto right = partition(unexchanged(1), graph::ShipStrategy::kHash, rel.join.right_keys);
        left->parallelism = -1;
        right->parallelism = -1;
        if (rel.kind == RelKind::kTemporalJoin) {
          // Flink's StreamExecTemporalJoin: the same two HASH exchanges into a TemporalRowTimeJoinOperator.
          auto t = make(graph::TransformationKind::kOneInput, "TemporalJoin", rel, {left, right}, -1);
          t->factory = makeTemporalJoinFactory(rel.inputs[0]->row_type, rel.inputs[1]->row_type, rel.temporal,
                                               countProducers(left));
          return t;
        }
        auto t = make(graph::TransformationKind::kOneInput, "Join", rel, {left, right}, -1);
        JoinSpec spec = rel.join;
        spec.state_ttl_ms = state_ttl_ms_;
        t->factory = makeStreamingJoinFactory(rel.inputs[0]->row_type, rel.inputs[1]->row_type, spec,
                                              countProducers(left));
        return t;
      }
      case RelKind::kIntervalJoin: {
        // Flink's StreamExecIntervalJoin: keyed by the join keys as a regular join; without keys both inputs
        // go to one subtask (parallelism 1).
        auto unexchanged = [&](size_t i) {
          graph::TransformationPtr in = input(rel, i);
          return in->kind == graph::TransformationKind::kPartition ? in->inputs[0] : in;
        };
        const bool single = rel.join.left_keys.empty();
        auto exchange = [&](size_t i, const std::vector<int>& keys) {
          auto ex = single ? partition(unexchanged(i), graph::ShipStrategy::kGlobal)
                           : partition(unexchanged(i), graph::ShipStrategy::kHash, keys);
          ex->parallelism = -1;
          return ex;
        };
        auto left = exchange(0, rel.join.left_keys);
        auto right = exchange(1, rel.join.right_keys);
        auto t = make(graph::TransformationKind::kOneInput, "IntervalJoin", rel, {left, right}, single ? 1 : -1);
        t->factory = makeIntervalJoinFactory(rel.inputs[0]->row_type, rel.inputs[1]->row_type, rel.join, rel.interval,
                                             countProducers(left));
        return t;
      }
      case RelKind::kWindowJoin: {
        // Flink's StreamExecWindowJoin: keyed by the join keys; without keys both inputs go to one subtask.
        auto unexchanged = [&](size_t i) {
          graph::TransformationPtr in = input(rel, i);
          return in->kind == graph::TransformationKind::kPartition ? in->inputs[0] : in;
        };
        const bool single = rel.join.left_keys.empty();
        auto exchange = [&](size_t i, const std::vector<int>& keys) {
          auto ex = single ? partition(unexchanged(i), graph::ShipStrategy::kGlobal)
                           : partition(unexchanged(i), graph::ShipStrategy::kHash, keys);
          ex->parallelism = -1;
          return ex;
        };
        auto left = exchange(0, rel.join.left_keys);
        auto right = exchange(1, rel.join.right_keys);
        auto t = make(graph::TransformationKind::kOneInput, "WindowJoin", rel, {left, right}, single ? 1 : -1);
        t->factory = makeWindowJoinFactory(rel.inputs[0]->row_type, rel.inputs[1]->row_type, rel.join,
                                           rel.window_join_cols[1], rel.window_join_cols[3], countProducers(left),
                                           rel.window.time_zone);
        return t;
      }
      case RelKind::kLookupJoin: {
        // Flink's StreamExecLookupJoin: chained after the probe side at its parallelism, no exchange.
        auto in = input(rel, 0);
        auto t = make(graph::TransformationKind::kOneInput, "LookupJoin", rel, {in}, in->parallelism);
        t->factory = makeLookupJoinFactory(rel.inputs[0]->row_type, rel.lookup);
        return t;
      }
      case RelKind::kCorrelate: {
        auto in = input(rel, 0);
        auto t = make(graph::TransformationKind::kOneInput, "Correlate", rel, {in}, in->parallelism);
        t->factory = makeCorrelateFactory(rel.inputs[0]->row_type, rel.row_type, rel.correlate.function,
                                          rel.correlate.function_name, rel.correlate.args, rel.correlate.left_outer);
        return t;
      }
      case RelKind::kWindowTableFunction: {
        // Flink's StreamExecWindowTableFunction: chained after its input, no exchange.
        auto in = input(rel, 0);
        auto t = make(graph::TransformationKind::kOneInput, "WindowTableFunction", rel, {in}, in->parallelism);
        t->factory = makeWindowTableFunctionFactory(rel.inputs[0]->row_type, rel.window);
        return t;
      }
      case RelKind::kReplicateRows: {
        auto in = input(rel, 0);
        auto t = make(graph::TransformationKind::kOneInput, "Correlate", rel, {in}, in->parallelism);
        t->factory = makeReplicateRowsFactory(rel.inputs[0]->row_type);
        return t;
      }
      case RelKind::kUnion: {
        std::vector<graph::TransformationPtr> ins;
        for (size_t i = 0; i < rel.inputs.size(); ++i) ins.push_back(input(rel, i));
        return make(graph::TransformationKind::kUnion, "Union", rel, ins, -1);
      }
      case RelKind::kSink: {
        auto in = input(rel, 0);
        int p = rel.parallelism > 0 ? rel.parallelism : in->parallelism;
        if (rel.sink && rel.parallelism > 0 && rel.producesUpdates() && resolve(in->parallelism) != rel.parallelism) {
          // Flink's CommonExecSink: updates into a sink of another parallelism are keyed by its primary
          // key so that every change of a key is written by one subtask, in order.
          if (rel.primary_key.empty())
            throw UserError(fmt::format(
                "The sink for table 'default_catalog.default_database.{}' has a configured parallelism of {}, while "
                "the input parallelism is {}. Since the configured parallelism is different from the input "
                "parallelism and the changelog mode contains [UPDATE_BEFORE, UPDATE_AFTER, DELETE], which is not "
                "INSERT_ONLY mode, primary key is required but no primary key is found",
                rel.sink_name, rel.parallelism, resolve(in->parallelism)));
          in = partition(in, graph::ShipStrategy::kHash, rel.primary_key);
        }
        if (!rel.not_null_columns.empty()) {
          // Flink's CommonExecSink: a ConstraintEnforcer chained in front of the sink writer.
          auto constraint = std::make_shared<NotNullConstraint>();
          constraint->table_name = rel.sink_name;
          constraint->columns = rel.not_null_columns;
          for (int c : rel.not_null_columns) constraint->names.push_back(rel.row_type.names[static_cast<size_t>(c)]);
          constraint->drop = not_null_drop_;
          auto enforcer = make(graph::TransformationKind::kOneInput, notNullEnforcerName(*constraint), rel, {in}, p);
          enforcer->factory = makeNotNullEnforcerFactory(constraint);
          in = enforcer;
        }
        auto t = make(graph::TransformationKind::kSink, "Sink: " + (rel.sink ? rel.sink_name : std::string("collect")), rel, {in}, p);
        if (rel.sink) {
          t->factory = rel.sink->operatorFactory();
        } else {
          SLUICE_CHECK(collect_ != nullptr, "a bare SELECT needs a collect sink");
          t->factory = collect_;
          t->parallelism = 1;
        }
        return t;
      }
    }
    SLUICE_CHECK(false, "unknown RelKind");
    return nullptr;
  }

  /// The input edges a transformation stands for at its consumer (a union: one per input).
  static int countProducers(const graph::TransformationPtr& t) {
    if (t->kind == graph::TransformationKind::kPartition) return countProducers(t->inputs[0]);
    if (t->kind != graph::TransformationKind::kUnion) return 1;
    int n = 0;
    for (const auto& in : t->inputs) n += countProducers(in);
    return n;
  }

  int resolve(int parallelism) const { return parallelism > 0 ? parallelism : default_parallelism_; }

  int default_parallelism_;
  bool not_null_drop_;  ///< table.exec.sink.not-null-enforcer = DROP
  MiniBatchSpec mini_batch_;  ///< table.exec.mini-batch.*
  int64_t state_ttl_ms_;      ///< table.exec.state.ttl (0: state kept for good)
  std::shared_ptr<const runtime::StreamOperatorFactory> collect_;
  std::map<const RelNode*, graph::TransformationPtr> done_;
  int next_id_ = 1;
};

}  // namespace

std::vector<graph::TransformationPtr> translateToTransformations(
    const std::vector<RelNodePtr>& roots, const Configuration& config,
    std::shared_ptr<const runtime::StreamOperatorFactory> collect_factory) {
  Translator tr(config, std::move(collect_factory));
  std::vector<graph::TransformationPtr> sinks;
  for (const auto& r : roots) sinks.push_back(tr.translate(r));
  return sinks;
}

}  // namespace sluice::table

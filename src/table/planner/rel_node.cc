#include "table/planner/rel_node.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <map>
#include <set>

namespace sluice::table {

namespace {

std::string durationText(int64_t ms) {
  if (ms % 86400000 == 0) return fmt::format("{} d", ms / 86400000);
  if (ms % 3600000 == 0) return fmt::format("{} h", ms / 3600000);
  if (ms % 60000 == 0) return fmt::format("{} min", ms / 60000);
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{} ms", ms);
}

const char* aggName(AggKind k) {
  switch (k) {
    case AggKind::kCountStar: return "COUNT(*)";
    case AggKind::kCount: return "COUNT";
    case AggKind::kSum: return "SUM";
    case AggKind::kMin: return "MIN";
    case AggKind::kMax: return "MAX";
    case AggKind::kAvg: return "AVG";
    case AggKind::kFirstValue: return "FIRST_VALUE";
    case AggKind::kLastValue: return "LAST_VALUE";
    case AggKind::kListAgg: return "LISTAGG";
    case AggKind::kUser: return "?";  // aggText names the function
  }
  return "?";
}

std::string columnName(int index, const std::vector<std::string>& in_names) {
  return index >= 0 && static_cast<size_t>(index) < in_names.size() ? in_names[static_cast<size_t>(index)]
                                                                     : fmt::format("${}", index);
}

// Flink's explain: COUNT(DISTINCT bidder) FILTER $f3.
std::string aggText(const AggregateCall& a, const std::vector<std::string>& in_names) {
  if (a.kind == AggKind::kUser) {
    std::string out = a.function_name + "(" + (a.distinct ? "DISTINCT " : "");
    for (size_t i = 0; i < a.user_args.size(); ++i) out += (i > 0 ? ", " : "") + columnName(a.user_args[i], in_names);
    out += ")";
    if (a.filter_arg >= 0) out += " FILTER " + columnName(a.filter_arg, in_names);
    return out;
  }
  std::string out = a.kind == AggKind::kCountStar
                        ? std::string("COUNT(*)")
                        : fmt::format("{}({}{})", aggName(a.kind), a.distinct ? "DISTINCT " : "",
                                      columnName(a.arg_index, in_names));
  if (a.kind == AggKind::kListAgg && a.separator != ",") out.insert(out.size() - 1, fmt::format(", '{}'", a.separator));
  if (a.filter_arg >= 0) out += " FILTER " + columnName(a.filter_arg, in_names);
  return out;
}

// Flink's WindowSpec descriptions: TUMBLE(..., size=[..]), HOP(..., size=[..], slide=[..]),
// CUMULATE(..., max_size=[..], step=[..]), SESSION(..., gap=[..]), each with offset=[..] when set.
std::string windowText(const WindowSpec& window, const std::vector<std::string>* in_names) {
  // (a window without its time column: windowSummary)
  const std::string time = in_names ? (*in_names)[static_cast<size_t>(window.time_index)] : "?";
  std::string w;
  switch (window.kind) {
    case WindowSpec::Kind::kTumble:
      w = fmt::format("TUMBLE(time_col=[{}], size=[{}]", time, durationText(window.size_ms));
      break;
    case WindowSpec::Kind::kHop:
      w = fmt::format("HOP(time_col=[{}], size=[{}], slide=[{}]", time, durationText(window.size_ms),
                      durationText(window.slide_ms));
      break;
    case WindowSpec::Kind::kCumulate:
      w = fmt::format("CUMULATE(time_col=[{}], max_size=[{}], step=[{}]", time, durationText(window.size_ms),
                      durationText(window.slide_ms));
      break;
    case WindowSpec::Kind::kSession: {
      // SessionWindowSpec.toSummaryString: partition keys=[k1, k2] only when there are some.
      w = fmt::format("SESSION(time_col=[{}], gap=[{}]", time, durationText(window.size_ms));
      std::vector<std::string> pk;
      for (int k : window.partition_keys) pk.push_back(in_names ? (*in_names)[static_cast<size_t>(k)] : fmt::format("${}", k));
      if (!pk.empty()) w += fmt::format(", partition keys=[{}]", fmt::join(pk, ", "));
      break;
    }
  }
  if (window.offset_ms != 0)
    w += fmt::format(", offset=[{}{}]", window.offset_ms < 0 ? "-" : "", durationText(std::abs(window.offset_ms)));
  return w + ")";
}

}  // namespace

void uniquifyNames(std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (auto& n : names) {
    if (seen.insert(n).second) continue;
    for (int i = 0;; ++i) {
      std::string candidate = n + std::to_string(i);
      if (seen.insert(candidate).second) {
        n = candidate;
        break;
      }
    }
  }
}

std::string RelNode::describe() const {
  const std::vector<std::string>* in_names = inputs.empty() ? nullptr : &inputs[0]->row_type.names;
  switch (kind) {
    case RelKind::kTableSourceScan:
      if (is_values) return fmt::format("Values(tuples=[{}], values=[{}])", source->summary(), fmt::join(row_type.names, ", "));
      // A watermark pushed into the source shows inside the table's brackets, as Flink's digest does.
      return fmt::format(
          "TableSourceScan(table=[[default_catalog, default_database, {}{}]], fields=[{}]{})", table_name,
          watermark_expr ? fmt::format(", watermark=[{}]", watermark_expr->toString(&row_type.names)) : "",
          fmt::join(row_type.names, ", "), parallelism > 0 ? fmt::format(", parallelism=[{}]", parallelism) : "");
    case RelKind::kCalc: {
      std::vector<std::string> items;
      for (size_t i = 0; i < projections.size(); ++i) {
        std::string e = projections[i]->toString(in_names);
        bool same = projections[i]->kind == ExprKind::kInputRef && in_names &&
                    (*in_names)[static_cast<size_t>(projections[i]->input_index)] == row_type.names[i];
        items.push_back(same ? e : fmt::format("{} AS {}", e, row_type.names[i]));
      }
      std::string out = fmt::format("Calc(select=[{}]", fmt::join(items, ", "));
      if (condition) out += fmt::format(", where=[{}]", condition->toString(in_names));
      return out + ")";
    }
    case RelKind::kWatermarkAssigner:
      return fmt::format("WatermarkAssigner(rowtime=[{}], watermark=[{}])", row_type.names[static_cast<size_t>(rowtime_index)],
                         watermark_expr ? watermark_expr->toString(&row_type.names) : "?");
    case RelKind::kGroupAggregate:
    case RelKind::kWindowAggregate: {
      std::vector<std::string> keys, sel;
      for (int k : group_keys) keys.push_back(in_names ? (*in_names)[static_cast<size_t>(k)] : fmt::format("${}", k));
      sel = keys;
      for (size_t i = 0; i < aggregates.size(); ++i)
        sel.push_back(fmt::format("{} AS {}", aggText(aggregates[i], in_names ? *in_names : std::vector<std::string>{}),
                                  row_type.names[group_keys.size() + i]));
      if (kind == RelKind::kGroupAggregate)
        return fmt::format("GroupAggregate(groupBy=[{}], select=[{}])", fmt::join(keys, ", "), fmt::join(sel, ", "));
      std::string time = in_names ? (*in_names)[static_cast<size_t>(window.time_index)] : "?";
      if (group_window) {
        // Flink's GroupWindowAggregate: LogicalWindow.toString (sizes in ms) and the named window properties.
        std::string gw = window.kind == WindowSpec::Kind::kTumble
                             ? fmt::format("TumblingGroupWindow('w$, {}, {})", time, window.size_ms)
                         : window.kind == WindowSpec::Kind::kHop
                             ? fmt::format("SlidingGroupWindow('w$, {}, {}, {})", time, window.size_ms, window.slide_ms)
                             : fmt::format("SessionGroupWindow('w$, {}, {})", time, window.size_ms);
        for (const char* p : {"start", "end", "rowtime", "proctime"}) sel.push_back(fmt::format("{}('w$) AS w${}", p, p));
        return fmt::format(
            "GroupWindowAggregate(groupBy=[{}], window=[{}], properties=[w$start, w$end, w$rowtime, w$proctime], "
            "select=[{}])",
            fmt::join(keys, ", "), gw, fmt::join(sel, ", "));
      }
      std::string w = windowText(window, in_names);
      sel.push_back("window_start");
      sel.push_back("window_end");
      return fmt::format("WindowAggregate(groupBy=[{}], window=[{}], select=[{}])", fmt::join(keys, ", "), w,
                         fmt::join(sel, ", "));
    }
    case RelKind::kOverAggregate: {
      // Flink's RelExplainUtil.overAggregationToString, "RANG" included; a RANGE offset in ms.
      std::vector<std::string> keys, sel = *in_names;
      for (int k : over.partition_keys) keys.push_back((*in_names)[static_cast<size_t>(k)]);
      for (size_t i = 0; i < over.calls.size(); ++i)
        sel.push_back(fmt::format("{} AS {}", aggText(over.calls[i], *in_names), row_type.names[in_names->size() + i]));
      std::string lower = over.unbounded ? "UNBOUNDED" : std::to_string(over.preceding);
      return fmt::format("OverAggregate({}orderBy=[{} ASC], window=[ {} BETWEEN {} PRECEDING AND CURRENT ROW], "
                         "select=[{}])",
                         keys.empty() ? "" : fmt::format("partitionBy=[{}], ", fmt::join(keys, ", ")),
                         (*in_names)[static_cast<size_t>(over.time_column)], over.rows ? "ROWS" : "RANG", lower,
                         fmt::join(sel, ", "));
    }
    case RelKind::kChangelogNormalize: {
      std::vector<std::string> keys;
      for (int k : group_keys) keys.push_back(row_type.names[static_cast<size_t>(k)]);
      return fmt::format("ChangelogNormalize(key=[{}])", fmt::join(keys, ", "));
    }
    case RelKind::kJoin:
    case RelKind::kIntervalJoin:
    case RelKind::kWindowJoin: {
      // Flink prints the whole join condition: the key equalities, then the non-equi part.
      std::vector<std::string> conj;
      const size_t nl = inputs[0]->row_type.size();
      // The joined row's names (a rename above may have relabelled this node's own).
      std::vector<std::string> names = inputs[0]->row_type.names;
      for (const auto& n : inputs[1]->row_type.names) names.push_back(n);
      uniquifyNames(names);
      for (size_t i = 0; i < join.left_keys.size(); ++i)
        conj.push_back(fmt::format("=({}, {})", names[static_cast<size_t>(join.left_keys[i])],
                                   names[nl + static_cast<size_t>(join.right_keys[i])]));
      auto addConjuncts = [&](const ExprPtr& e) {
        if (!e) return;
        if (e->kind == ExprKind::kCall && e->op == ScalarOp::kAnd) {
          for (const auto& a : e->args) conj.push_back(a->toString(&names));
        } else {
          conj.push_back(e->toString(&names));
        }
      };
      if (kind == RelKind::kIntervalJoin) addConjuncts(interval_condition);
      addConjuncts(join.non_equi_condition);
      std::string where = conj.size() == 1 ? conj[0] : fmt::format("AND({})", fmt::join(conj, ", "));
      if (kind == RelKind::kWindowJoin) {
        // Flink's WindowJoin: both sides' window (WindowingStrategy summary: win_start / win_end columns) and
        // the condition without the window equalities.
        // Each window names its own input's columns.
        auto side = [&](size_t input, int start, int end) {
          const std::vector<std::string>& in = inputs[input]->row_type.names;
          return windowAttachedSummary(window, in[static_cast<size_t>(start)], in[static_cast<size_t>(end)]);
        };
        return fmt::format("WindowJoin(leftWindow=[{}], rightWindow=[{}], joinType=[{}], where=[{}], select=[{}])",
                           side(0, window_join_cols[0], window_join_cols[1]),
                           side(1, window_join_cols[2], window_join_cols[3]), joinTypeName(join.type),
                           conj.empty() ? "true" : where,
                           fmt::join(names.begin(), join.isSemiOrAnti() ? names.begin() + static_cast<long>(nl) : names.end(), ", "));
      }
      if (kind == RelKind::kIntervalJoin)
        return fmt::format("IntervalJoin(joinType=[{}], windowBounds=[{}], where=[{}], select=[{}])",
                           joinTypeName(join.type), interval.toString(), where, fmt::join(names, ", "));
      return fmt::format("Join(joinType=[{}], where=[{}], select=[{}], leftInputSpec=[{}], rightInputSpec=[{}])",
                         joinTypeName(join.type), where,
                         fmt::join(names.begin(), join.isSemiOrAnti() ? names.begin() + static_cast<long>(nl) : names.end(), ", "),
                         join.left_spec.toString(),
                         join.right_spec.toString());
    }
    case RelKind::kTemporalJoin: {
      // Flink's TemporalJoin: the key equalities, the rest, then the temporal condition over both row times.
      const size_t nl = inputs[0]->row_type.size();
      std::vector<std::string> names = inputs[0]->row_type.names;
      for (const auto& n : inputs[1]->row_type.names) names.push_back(n);
      uniquifyNames(names);
      std::vector<std::string> conj, lk, rk, pk;
      for (size_t i = 0; i < join.left_keys.size(); ++i) {
        lk.push_back(names[static_cast<size_t>(join.left_keys[i])]);
        rk.push_back(names[nl + static_cast<size_t>(join.right_keys[i])]);
        conj.push_back(fmt::format("=({}, {})", lk.back(), rk.back()));
      }
      for (int k : temporal_primary_key) pk.push_back(names[nl + static_cast<size_t>(k)]);
      if (join.non_equi_condition) {
        const Expr& c = *join.non_equi_condition;
        if (c.kind == ExprKind::kCall && c.op == ScalarOp::kAnd) {
          for (const auto& a : c.args) conj.push_back(a->toString(&names));
        } else {
          conj.push_back(c.toString(&names));
        }
      }
      conj.push_back(fmt::format("__TEMPORAL_JOIN_CONDITION({}, {}, __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY({}), "
                                 "__TEMPORAL_JOIN_LEFT_KEY({}), __TEMPORAL_JOIN_RIGHT_KEY({}))",
                                 names[static_cast<size_t>(temporal.left_time)],
                                 names[nl + static_cast<size_t>(temporal.right_time)], fmt::join(pk, ", "),
                                 fmt::join(lk, ", "), fmt::join(rk, ", ")));
      return fmt::format("TemporalJoin(joinType=[{}], where=[AND({})], select=[{}])", joinTypeName(join.type),
                         fmt::join(conj, ", "), fmt::join(names, ", "));
    }
    case RelKind::kLookupJoin: {
      // Flink's CommonPhysicalLookupJoin.explainTerms: lookup=[table field=input field], where= the calc on the
      // dimension table, joinCondition= the rest over the joined row.
      const std::vector<std::string>& probe = inputs[0]->row_type.names;
      std::vector<std::string> keys;
      for (size_t i = 0; i < lookup.probe_keys.size(); ++i)
        keys.push_back(fmt::format("{}={}", lookup_key_fields[i], probe[static_cast<size_t>(lookup.probe_keys[i])]));
      std::vector<std::string> joined = probe;
      for (size_t i = 0; i < lookup.dim_width; ++i) joined.push_back(lookupDimType(lookup).names[i]);
      uniquifyNames(joined);
      std::string out = fmt::format("LookupJoin(table=[default_catalog.default_database.{}], joinType=[{}], lookup=[{}]",
                                    lookup.table_name, joinTypeName(lookup.type), fmt::join(keys, ", "));
      if (lookup.dim_condition) out += fmt::format(", where=[{}]", lookup.dim_condition->toString(&lookup_table_fields));
      if (lookup.join_condition) out += fmt::format(", joinCondition=[{}]", lookup.join_condition->toString(&joined));
      return out + fmt::format(", select=[{}])", fmt::join(joined, ", "));
    }
    case RelKind::kUnion: return fmt::format("Union(all=[true], union=[{}])", fmt::join(row_type.names, ", "));
    case RelKind::kWindowTableFunction:
      return fmt::format("WindowTableFunction(window=[{}])", windowText(window, in_names));
    case RelKind::kCorrelate: {
      std::vector<std::string> args;
      for (const auto& a : correlate.args) args.push_back(a->toString(&inputs[0]->row_type.names));
      const std::string call = fmt::format("{}({})", correlate.function_name, fmt::join(args, ", "));
      return fmt::format("Correlate(invocation=[{}], correlate=[table({})], select=[{}], joinType=[{}])", call, call,
                         fmt::join(row_type.names, ", "), correlate.left_outer ? "LEFT" : "INNER");
    }
    case RelKind::kReplicateRows:
      // Flink: Correlate(invocation=[$REPLICATE_ROWS$1($0, ...)], ...) after a GroupAggregate.
      return fmt::format("Correlate(invocation=[$REPLICATE_ROWS$1({})], select=[{}])",
                         fmt::join(inputs[0]->row_type.names, ", "), fmt::join(row_type.names, ", "));
    case RelKind::kRank:
    case RelKind::kDeduplicate:
    case RelKind::kWindowRank:
    case RelKind::kWindowDeduplicate:
      return describeRank(*this);
    case RelKind::kSink:
      if (!sink) return fmt::format("Collect(fields=[{}])", fmt::join(row_type.names, ", "));
      return fmt::format("Sink(table=[default_catalog.default_database.{}], fields=[{}])", sink_name,
                         fmt::join(row_type.names, ", "));
  }
  return "?";
}

namespace {

/// Reuse ids of the nodes read by more than one consumer, numbered in print order (Flink's
/// "(reuse_id=[N])" / "Reused(reference_id=[N])").
struct ReuseIds {
  std::map<const RelNode*, int> consumers;
  std::map<const RelNode*, int> ids;  ///< the shared nodes printed so far
  int next = 1;

  void count(const RelNode& n) {
    if (++consumers[&n] > 1) return;
    for (const auto& in : n.inputs) count(*in);
  }
};

void explainInto(const RelNode& n, const std::string& prefix, bool root, bool last, ReuseIds& reuse, std::string& out) {
  out += prefix;
  if (!root) out += last ? "+- " : ":- ";  // Flink's RelTreeWriterImpl: ":- " before a later sibling
  const bool shared = reuse.consumers[&n] > 1;
  if (shared && reuse.ids.count(&n)) {
    out += fmt::format("Reused(reference_id=[{}])\n", reuse.ids.at(&n));
    return;
  }
  out += n.describe();
  if (shared) {
    reuse.ids[&n] = reuse.next;
    out += fmt::format("(reuse_id=[{}])", reuse.next++);
  }
  if (n.changelog == ChangelogMode::kAll) out += "  [changelog: +I,-U,+U,-D]";
  if (n.changelog == ChangelogMode::kUpsert) out += "  [changelog: +I,+U,-D]";
  out += '\n';
  std::string child_prefix = root ? prefix : prefix + (last ? "   " : ":  ");
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const bool last_input = i + 1 == n.inputs.size();
    if (n.kind == RelKind::kJoin || n.kind == RelKind::kIntervalJoin || n.kind == RelKind::kTemporalJoin ||
        n.kind == RelKind::kWindowJoin) {
      // Both join inputs are hash-partitioned on their keys, as Flink's plan shows them (an interval
      // join without keys: one subtask).
      const std::vector<int>& keys = i == 0 ? n.join.left_keys : n.join.right_keys;
      std::vector<std::string> names;
      for (int k : keys) names.push_back(n.inputs[i]->row_type.names[static_cast<size_t>(k)]);
      out += child_prefix + (last_input ? "+- " : ":- ") +
             (keys.empty() ? std::string("Exchange(distribution=[single])\n")
                           : fmt::format("Exchange(distribution=[hash[{}]])\n", fmt::join(names, ", ")));
      explainInto(*n.inputs[i], child_prefix + (last_input ? "   " : ":  "), false, true, reuse, out);
      continue;
    }
    explainInto(*n.inputs[i], child_prefix, false, last_input, reuse, out);
  }
}

std::string explainRoots(const std::vector<const RelNode*>& roots) {
  ReuseIds reuse;
  for (const RelNode* r : roots) reuse.count(*r);
  std::string out;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (i > 0) out += '\n';  // a blank line between the sinks' trees, as Flink prints a statement set
    explainInto(*roots[i], "", true, true, reuse, out);
  }
  return out;
}
}  // namespace

std::string explainPlan(const RelNode& root) { return explainRoots({&root}); }

std::string explainPlan(const std::vector<RelNodePtr>& roots) {
  std::vector<const RelNode*> plain;
  for (const auto& r : roots) plain.push_back(r.get());
  return explainRoots(plain);
}

std::string windowSummary(const WindowSpec& window) {
  std::string w = windowText(window, nullptr);
  const size_t open = w.find('(');
  const size_t close = w.find("], ", open);  // the end of time_col=[?]
  return w.substr(0, open + 1) + w.substr(close + 3);
}

std::string windowAttachedSummary(const WindowSpec& window, const std::string& start, const std::string& end) {
  const std::string w = windowSummary(window);
  const size_t open = w.find('(');
  return fmt::format("{}(win_start=[{}], win_end=[{}], {}", w.substr(0, open), start, end, w.substr(open + 1));
}

}  // namespace sluice::table

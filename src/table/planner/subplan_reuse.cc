#include "table/planner/subplan_reuse.h"

#include <fmt/format.h>

#include <map>
#include <string>

#include "common/config.h"

namespace sluice::table {

namespace {

// Flink's OptimizerConfigOptions.TABLE_OPTIMIZER_REUSE_SUB_PLAN_ENABLED / _REUSE_SOURCE_ENABLED.
const ConfigOption<bool> kReuseSubPlanEnabled(
    "table.optimizer.reuse-sub-plan-enabled", ConfigType::kBool, "true",
    "Whether the planner finds identical sub-plans among the INSERTs of a statement set (and inside one query) "
    "and computes each of them once, feeding all its consumers.");
const ConfigOption<bool> kReuseSourceEnabled(
    "table.optimizer.reuse-source-enabled", ConfigType::kBool, "true",
    "Whether scans of the same table are read once by one source that feeds every consumer (the columns read "
    "are the union of what the consumers need). Needs table.optimizer.reuse-sub-plan-enabled.");

void appendType(std::string& out, const types::LogicalType& t) {
  out += t.toString();
  out += ';';
}

// A structural digest of an expression: every field that changes its value, types included (two
// expressions print alike in explain but differ, e.g. CAST to INT and to BIGINT of a literal).
void appendExpr(std::string& out, const ExprPtr& e) {
  if (!e) {
    out += "~";
    return;
  }
  switch (e->kind) {
    case ExprKind::kInputRef:
      out += fmt::format("${}:", e->input_index);
      break;
    case ExprKind::kLiteral:
      switch (e->literal.index()) {
        case 0:
          out += "null:";
          break;
        case 1:
          out += fmt::format("l{}:", std::get<int64_t>(e->literal));
          break;
        case 2:
          out += fmt::format("d{}:", std::get<double>(e->literal));
          break;
        default: {
          const auto& s = std::get<std::string>(e->literal);
          out += fmt::format("s{}'{}':", s.size(), s);
        }
      }
      break;
    case ExprKind::kCall:
      out += fmt::format("{}(", static_cast<int>(e->op));
      for (const auto& a : e->args) {
        appendExpr(out, a);
        out += ',';
      }
      out += "):";
      break;
  }
  appendType(out, e->type);
}

void appendInts(std::string& out, const std::vector<int>& v) {
  out += '[';
  for (int i : v) out += fmt::format("{},", i);
  out += ']';
}

class SubplanReuser {
 public:
  explicit SubplanReuser(bool reuse_sources) : reuse_sources_(reuse_sources) {}

  RelNodePtr reuse(const RelNodePtr& rel) {
    auto done = done_.find(rel.get());
    if (done != done_.end()) return done->second;
    RelNodePtr node = rel;
    std::vector<RelNodePtr> inputs;
    bool changed = false;
    for (const auto& in : rel->inputs) {
      inputs.push_back(reuse(in));
      changed = changed || inputs.back() != in;
    }
    if (changed) {
      auto copy = std::make_shared<RelNode>(*rel);
      copy->inputs = std::move(inputs);
      node = copy;
    }
    RelNodePtr out = node;
    if (reusable(*node)) {
      auto [it, inserted] = by_digest_.emplace(digest(*node), node);
      out = it->second;
      if (inserted) ids_[node.get()] = next_id_++;
    }
    done_[rel.get()] = out;
    return out;
  }

 private:
  bool reusable(const RelNode& n) const {
    if (n.kind == RelKind::kSink) return false;
    if (n.kind == RelKind::kTableSourceScan) return reuse_sources_;
    // A node over an input that was not reused has that input to itself: it cannot equal another one.
    for (const auto& in : n.inputs)
      if (ids_.count(in.get()) == 0) return false;
    return true;
  }

  std::string digest(const RelNode& n) const {
    std::string d = fmt::format("{}|p{}|b{}|c{}|", static_cast<int>(n.kind), n.parallelism, n.in_source_block ? 1 : 0,
                                static_cast<int>(n.changelog));
    // A scan's column names are labels only (a view or alias renaming every column copies the scan with new
    // names); consumers read columns by index, so renamed scans of one table are one scan.
    const bool names = n.kind != RelKind::kTableSourceScan;
    for (size_t i = 0; i < n.row_type.size(); ++i) {
      d += fmt::format("{}{}:", names ? n.row_type.names[i] : std::string(),
                       i < n.rowtime.size() && n.rowtime[i] ? "*" : "");
      appendType(d, n.row_type.types[i]);
    }
    // The window's shift time zone (FLIP-162): one query in two zones aligns its windows differently.
    d += fmt::format("|tz{}", n.window.time_zone);
    d += "|in";
    for (const auto& in : n.inputs) d += fmt::format("#{}", ids_.at(in.get()));
    d += '|';
    switch (n.kind) {
      case RelKind::kTableSourceScan:
        // Scans of one table in one job come from one catalog definition and one configuration, and get the
        // same metadata and watermark push-down: the table and the source's own summary identify them.
        d += fmt::format("{}|{}|", n.table_name, n.source->summary());
        appendInts(d, n.primary_key);
        break;
      case RelKind::kCalc:
        appendExpr(d, n.condition);
        for (const auto& p : n.projections) {
          d += '|';
          appendExpr(d, p);
        }
        break;
      case RelKind::kWatermarkAssigner:
        d += fmt::format("{},{}|", n.rowtime_index, n.watermark_index);
        appendExpr(d, n.watermark_expr);
        break;
      case RelKind::kGroupAggregate:
      case RelKind::kWindowAggregate:
        appendInts(d, n.group_keys);
        for (const auto& a : n.aggregates) {
          d += fmt::format("|{},{},{},{},{}:", static_cast<int>(a.kind), a.arg_index, a.distinct ? 1 : 0, a.filter_arg,
                           a.kind == AggKind::kListAgg ? a.separator : std::string());
          appendType(d, a.arg_type);
          appendType(d, a.result_type);
          if (a.kind == AggKind::kUser) {
            // The same function object over the same columns (two registrations are two functions).
            d += fmt::format("u{}", static_cast<const void*>(a.function.get()));
            appendInts(d, a.user_args);
          }
        }
        if (n.kind == RelKind::kWindowAggregate)
          d += fmt::format("|w{},{},{},{},{},{}", static_cast<int>(n.window.kind), n.window.time_index, n.window.size_ms,
                           n.window.slide_ms, n.window.offset_ms, n.window.proctime ? 1 : 0);
        if (n.kind == RelKind::kWindowAggregate) {
          appendInts(d, n.window.partition_keys);
          d += n.group_window ? "|gw" : "";
        }
        break;
      case RelKind::kChangelogNormalize:
        appendInts(d, n.group_keys);
        break;
      case RelKind::kOverAggregate:
      case RelKind::kLookupJoin:
      case RelKind::kTemporalJoin:
      case RelKind::kCorrelate:
        d += n.describe();
        break;
      case RelKind::kWindowTableFunction:
        d += fmt::format("{}|t{}", n.describe(), n.window.time_index);
        break;
      case RelKind::kRank:
      case RelKind::kDeduplicate:
      case RelKind::kWindowRank:
      case RelKind::kWindowDeduplicate:
        d += describeRank(n);
        break;
      case RelKind::kWindowJoin:
        d += fmt::format("{}|", n.describe());
        [[fallthrough]];
      case RelKind::kIntervalJoin:
        d += n.interval.toString() + "|";
        appendExpr(d, n.interval_condition);
        [[fallthrough]];
      case RelKind::kJoin:
        d += fmt::format("j{}|", static_cast<int>(n.join.type));
        appendInts(d, n.join.left_keys);
        appendInts(d, n.join.right_keys);
        appendInts(d, n.join.left_spec.unique_key);
        appendInts(d, n.join.right_spec.unique_key);
        d += fmt::format("{}{}|", n.join.left_spec.join_key_contains_unique_key ? 1 : 0,
                         n.join.right_spec.join_key_contains_unique_key ? 1 : 0);
        appendExpr(d, n.join.non_equi_condition);
        break;
      case RelKind::kUnion:
      case RelKind::kSink:
      case RelKind::kReplicateRows:
        break;
    }
    return d;
  }

  const bool reuse_sources_;
  std::map<const RelNode*, RelNodePtr> done_;
  std::map<std::string, RelNodePtr> by_digest_;
  std::map<const RelNode*, int> ids_;  ///< the nodes in by_digest_ (the reused ones), numbered
  int next_id_ = 1;
};

}  // namespace

std::vector<RelNodePtr> reuseDuplicatedSubplans(const std::vector<RelNodePtr>& roots, const Configuration& config) {
  if (!config.get(kReuseSubPlanEnabled)) return roots;
  SubplanReuser reuser(config.get(kReuseSourceEnabled));
  std::vector<RelNodePtr> out;
  for (const auto& r : roots) out.push_back(reuser.reuse(r));
  return out;
}

}  // namespace sluice::table

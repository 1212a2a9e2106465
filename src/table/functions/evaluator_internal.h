#pragma once
/// Internal to the functions module: the compiled form of an expression. Each Expr node becomes a
/// Node whose eval() processes a whole batch column-at-a-time; type dispatch happens once per node
/// per batch, never per row. Nodes are immutable after compilation (so a compiled program may be
/// shared by threads); per-call scratch lives in EvalContext.
///
/// Results of a node: a column of ctx.rows rows, or (isConst()) a column of exactly one row that
/// stands for every row. `active` (may be null = all rows) marks the rows whose value matters; a
/// node that can fail per row (division by zero, overflow, bad CAST text) only fails on active,
/// non-NULL rows, which gives CASE/AND/OR/COALESCE Flink's lazy evaluation semantics.

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "table/functions/expression.h"
#include "types/row_batch.h"

namespace sluice::table::internal {

/// State of one evaluation call.
struct EvalContext {
  const types::RowBatch* batch = nullptr;
  size_t rows = 0;
  /// One column per computing node (Node::reg_), at least numRegs() long. Registers keep their
  /// capacity from call to call when the caller reuses them (EvalScratch).
  std::vector<types::Column>* regs = nullptr;
};

class Node {
 public:
  Node(types::LogicalType type, int reg, bool may_throw) : type_(type), reg_(reg), may_throw_(may_throw) {}
  virtual ~Node() = default;
  /// Evaluates the node for ctx.rows rows. The returned column lives in ctx (or the batch, or the
  /// node for constants) until the end of the evaluation call.
  virtual const types::Column& eval(EvalContext& ctx, const uint8_t* active) const = 0;
  /// True when the result is one row standing for all rows.
  virtual bool isConst() const { return false; }
  /// Input column index when this is a bare input reference, else -1.
  virtual int inputIndex() const { return -1; }
  /// True when this node or one below it can throw per row (so callers compute `active` masks).
  bool mayThrow() const { return may_throw_; }
  const types::LogicalType& type() const { return type_; }
  int reg() const { return reg_; }

 protected:
  /// The node's output register, reset to `rows` zeroed rows (keeping its capacity).
  types::Column& prepare(EvalContext& ctx) const;

  types::LogicalType type_;
  int reg_;
  bool may_throw_;
};

using NodePtr = std::unique_ptr<Node>;

/// Builds nodes; hands out registers.
class Compiler {
 public:
  NodePtr compile(const ExprPtr& e);
  /// Compiles `e` and converts its value to `target` when the physical form or meaning differs
  /// (implicit coercion: never truncates strings, never checks DECIMAL precision).
  NodePtr compileAs(const ExprPtr& e, const types::LogicalType& target);
  int newReg() { return num_regs_++; }
  int numRegs() const { return num_regs_; }

 private:
  NodePtr compileCall(const ExprPtr& e);
  /// Built-in functions of builtins.h (builtins.cc).
  NodePtr compileBuiltin(const ExprPtr& e);
  NodePtr fold(NodePtr node);
  int num_regs_ = 0;
};

/// A constant node holding one row.
NodePtr makeConstNode(types::Column value);
/// A constant NULL of `type`.
NodePtr makeNullConst(const types::LogicalType& type);

// Node factories, one per family (kernels_*.cc). Arguments are already coerced as each documents.
/// + - * / MOD. INT/BIGINT/TIMESTAMP/INTERVAL results: args int64-backed; DOUBLE: args DOUBLE;
/// DECIMAL: args DECIMAL or integral (scale 0).
NodePtr makeArithmeticNode(ScalarOp op, const types::LogicalType& type, NodePtr a, NodePtr b, int reg);
NodePtr makeNegateNode(bool abs, const types::LogicalType& type, NodePtr a, int reg);
/// = <> < <= > >= over args of one comparison family (both DOUBLE, both int64-like with the same
/// scale, both DECIMAL/integral with any scales, or both strings).
NodePtr makeCompareNode(ScalarOp op, NodePtr a, NodePtr b, int reg);
/// value IN (constants); `set` are constants of the value's comparison type (NULLs dropped,
/// `has_null` remembered).
NodePtr makeInConstNode(NodePtr value, std::vector<NodePtr> candidates, int reg);
NodePtr makeRoundNode(const types::LogicalType& type, NodePtr value, NodePtr digits, int reg);
/// `time_zone`: the session zone of a cast to or from TIMESTAMP_LTZ (castNeedsTimeZone), else empty.
NodePtr makeCastNode(const types::LogicalType& target, NodePtr value, bool implicit, bool try_cast, int reg,
                     const std::string& time_zone = "");
NodePtr makeLikeNode(NodePtr value, NodePtr pattern, char escape, bool has_escape, int reg);
NodePtr makeStringFunctionNode(ScalarOp op, const types::LogicalType& type, std::vector<NodePtr> args, int reg);
NodePtr makeTimeFunctionNode(ScalarOp op, const types::LogicalType& type, std::vector<NodePtr> args, int reg);

// Helpers for kernels.

/// Row `i` of a column that may be a constant.
inline size_t at(bool is_const, size_t i) { return is_const ? 0 : i; }

/// out[i] = validity of a AND validity of b (constants broadcast).
void andValidity(uint8_t* out, const types::Column& a, bool a_const, const types::Column& b, bool b_const, size_t n);
/// out[i] = validity of a.
void copyValidity(uint8_t* out, const types::Column& a, bool a_const, size_t n);
/// True when row i must be computed with errors raised: valid and active.
inline bool live(const uint8_t* valid, const uint8_t* active, size_t i) { return valid[i] && (!active || active[i]); }

/// Appends a string result for row i of a string output built row by row (strings() sized to rows).
inline void setString(types::Column& out, size_t i, std::string_view s) {
  out.strings()[i] = {static_cast<uint32_t>(out.arena().size()), static_cast<uint32_t>(s.size())};
  out.arena().append(s.data(), s.size());
}

}  // namespace sluice::table::internal

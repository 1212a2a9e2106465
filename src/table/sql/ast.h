#pragma once
/// The syntax tree of Flink SQL as Sluice parses it (Calcite's SqlNode role, unresolved and untyped).
///
/// Shape, chosen to be plain:
///  - Every node carries `SourcePos pos` (1-based line/column of its first token) for error messages.
///  - Expressions are ONE struct, `Expr`, with a `kind` and owned `children` (std::unique_ptr). Which
///    fields a kind uses is written next to each `ExprKind` value. Unused fields keep their defaults.
///  - Statements are ONE struct, `Statement`, with a `kind` and one owned payload per kind.
///  - Everything is owned by std::unique_ptr: move-only; use `clone()` for a deep copy.
/// Identifiers keep their case as written (Flink is case-sensitive for names); keywords and function
/// names are upper-cased. Nothing here is validated against a catalog: that is the planner's job.
/// Thread-safety: plain data; a tree is built by one thread and may then be read by many.
///
/// This header is a contract with the planner: it only ever grows (new kinds and fields), never changes.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "types/logical_type.h"

namespace sluice::table::sql {

/// A place in the SQL script: 1-based line and column (column counts characters, i.e. UTF-8 code
/// points, as Flink does). 0/0 = unknown.
struct SourcePos {
  int line = 0;
  int column = 0;
  bool operator==(const SourcePos& o) const { return line == o.line && column == o.column; }
};

/// A possibly qualified name as written: `cat.db.t` -> {"cat", "db", "t"}; `t` -> {"t"}.
using QualifiedName = std::vector<std::string>;

/// Joins the parts with '.' (no quoting): {"db", "t"} -> "db.t".
std::string qualifiedNameToString(const QualifiedName& name);

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

enum class ExprKind : uint8_t {
  kIdentifier,  ///< `names` = parts as written: a, t.a, `my col`
  kLiteral,     ///< `literal_kind`, `text`, `bool_value`, `interval_unit`
  kUnary,       ///< `unary_op`; children = {operand}
  kBinary,      ///< `binary_op`; children = {left, right}
  kBetween,     ///< `negated` (NOT BETWEEN); children = {value, low, high}
  kIn,          ///< `negated` (NOT IN); children = {value, item1, item2, ...}, or {value} and `subquery`
                ///<  for x [NOT] IN (SELECT ...)
  kLike,        ///< `negated` (NOT LIKE); children = {value, pattern} or {value, pattern, escape}
  kIsNull,      ///< `negated` (IS NOT NULL); children = {value}
  kIsTrue,      ///< `negated` (IS NOT TRUE); children = {value}
  kIsFalse,     ///< `negated` (IS NOT FALSE); children = {value}
  kCase,        ///< `case_has_operand`, `case_has_else`; children = [operand] (when, then)+ [else]
  kCast,        ///< `cast_type`; children = {value}
  kCall,        ///< `name` (upper case), `distinct`, `star`, `trim_mode`; children = arguments.
                ///<  COUNT(*): star = true, no children. agg(...) FILTER (WHERE c): `filter` = c.
                ///<  SUBSTRING(s FROM a [FOR b]) and SUBSTRING(s, a [, b]): name "SUBSTRING",
                ///<    children = {s, a} or {s, a, b}.
                ///<  TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) and TRIM(s): name "TRIM",
                ///<    children = {s} or {s, chars}; trim_mode = kBoth unless written.
                ///<  POSITION(a IN b): name "POSITION", children = {a, b}.
                ///<  a IS [NOT] DISTINCT FROM b: name "IS DISTINCT FROM" / "IS NOT DISTINCT FROM",
                ///<    children = {a, b}.
                ///<  EXTRACT(unit FROM x): name "EXTRACT", children = {kString literal with the unit
                ///<    upper-cased, e.g. 'HOUR', x}.
                ///<  OVERLAY(s PLACING r FROM a [FOR b]): name "OVERLAY", children = {s, r, a[, b]}.
                ///<  TIMESTAMPADD(unit, n, x), TIMESTAMPDIFF(unit, a, b): children = {kString literal
                ///<    with the unit upper-cased, ...}. FLOOR/CEIL(x TO unit): children = {x, unit literal}.
                ///<  JSON_OBJECT(KEY k VALUE v, ... [NULL|ABSENT ON NULL]): children = {'NULL' or
                ///<    'ABSENT' literal, k1, v1, ...}; JSON_ARRAY(v, ...): {mode literal, v1, ...}.
                ///<    JSON_VALUE(j, p RETURNING t) parses as TRY_CAST(JSON_VALUE(j, p) AS t).
                ///<    JSON_VALUE / JSON_QUERY / JSON_EXISTS with ON EMPTY / ON ERROR clauses other than the
                ///<    defaults: children = {j, p, empty mode literal ('NULL', 'ERROR', 'DEFAULT', ...),
                ///<    empty default or NULL, error mode literal, error default or NULL}.
                ///<  CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_DATE, CURRENT_TIME, LOCALTIME written
                ///<    without parentheses: a call with no children.
                ///<  Window TVFs inside TABLE(...): name "TUMBLE"/"HOP"/"CUMULATE", children =
                ///<    {kTableArg, kDescriptor, interval...}.
  kDescriptor,  ///< DESCRIPTOR(a, b): `names` = the column names (unqualified)
  kTableArg,    ///< TABLE t or TABLE (query) (a window TVF's table argument): `names` = the table name parts,
                ///<    or `subquery` (names empty); children = the PARTITION BY columns (kIdentifier), if any
  kOver,        ///< fn(...) OVER window: children = {the kCall}; `over` = the window (ast_window.cc)
  kExists,      ///< EXISTS (query): `subquery`, no children (NOT EXISTS is kUnary NOT over it)
};

/// Kinds of literal. `text` holds the literal as needed to evaluate it exactly.
enum class LiteralKind : uint8_t {
  kInteger,      ///< 42 -> text "42" (no sign; unary minus is a separate node). May exceed int64.
  kDecimal,      ///< exact 1.5, .5, 2. -> text as written ("1.5")
  kApproximate,  ///< 1e3, 1.5E-2 -> text as written
  kString,       ///< 'it''s' -> text "it's" (quotes removed, '' unescaped)
  kBoolean,      ///< TRUE/FALSE -> bool_value
  kNull,         ///< NULL
  kTimestamp,    ///< TIMESTAMP '2015-01-01 00:00:00' -> text "2015-01-01 00:00:00" (unchecked)
  kDate,         ///< DATE '2024-01-02' -> text "2024-01-02" (unchecked)
  kTime,         ///< TIME '12:34:56.789' -> text "12:34:56.789" (unchecked)
  kInterval,     ///< INTERVAL '1' MINUTE -> text "1", interval_unit kMinute (text may be "-1")
};

/// Units of INTERVAL literals. kMonth / kYear (year-month intervals) are only valid added to or
/// subtracted from a DATE or TIMESTAMP (the planner turns that into TIMESTAMPADD(MONTH, ...)).
enum class IntervalUnit : uint8_t { kSecond, kMinute, kHour, kDay, kMonth, kYear };

enum class UnaryOp : uint8_t { kMinus, kPlus, kNot };

enum class BinaryOp : uint8_t {
  kPlus, kMinus, kTimes, kDivide, kMod,  ///< + - * / %
  kConcat,                               ///< ||
  kEquals, kNotEquals,                   ///< = and (<> or !=)
  kLess, kLessOrEqual, kGreater, kGreaterOrEqual,
  kAnd, kOr,
};

/// TRIM's mode (SQL standard default BOTH).
enum class TrimMode : uint8_t { kBoth, kLeading, kTrailing };

/// SQL spelling: "+", "||", "<>", "AND", ...
const char* binaryOpToString(BinaryOp op);
/// "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR".
const char* intervalUnitToString(IntervalUnit unit);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct OverWindow;
struct Query;

/// One expression node; see ExprKind for which fields each kind uses.
struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  SourcePos pos;
  std::vector<ExprPtr> children;

  std::vector<std::string> names;  ///< kIdentifier, kDescriptor, kTableArg
  std::string name;                ///< kCall: function name, upper case

  LiteralKind literal_kind = LiteralKind::kNull;  ///< kLiteral
  std::string text;                               ///< kLiteral (see LiteralKind)
  bool bool_value = false;                        ///< kLiteral kBoolean
  IntervalUnit interval_unit = IntervalUnit::kSecond;  ///< kLiteral kInterval

  UnaryOp unary_op = UnaryOp::kMinus;    ///< kUnary
  BinaryOp binary_op = BinaryOp::kPlus;  ///< kBinary
  bool negated = false;                  ///< kBetween, kIn, kLike, kIsNull, kIsTrue, kIsFalse
  bool case_has_operand = false;         ///< kCase: CASE x WHEN ... (simple form)
  bool case_has_else = false;            ///< kCase
  types::LogicalType cast_type;          ///< kCast target
  bool try_cast = false;                 ///< kCast: TRY_CAST (NULL instead of an error on bad input)
  bool distinct = false;                 ///< kCall: f(DISTINCT x)
  bool star = false;                     ///< kCall: COUNT(*)
  TrimMode trim_mode = TrimMode::kBoth;  ///< kCall TRIM
  /// kOver: the window, immutable once parsed (clones share it).
  std::shared_ptr<const OverWindow> over;
  std::shared_ptr<const Query> subquery;  ///< kIn: the subquery of x IN (SELECT ...); kExists; kTableArg; else null (shared by clones)
  /// kCall: the condition of `agg(...) FILTER (WHERE cond)`, else null (immutable, shared by clones).
  std::shared_ptr<const Expr> filter;

  /// Deep copy.
  ExprPtr clone() const;
  /// Structural equality ignoring positions (used e.g. to match SELECT items to GROUP BY exprs).
  bool equals(const Expr& other) const;
  /// Debug text, fully parenthesized: "(a + 1)", "COUNT(*)", "CAST(x AS INT)", "(x IS NOT NULL)",
  /// "INTERVAL '1' MINUTE", "'it''s'", "CASE WHEN (a > 1) THEN 'x' ELSE 'y' END".
  std::string toString() const;
};

/// Convenience builders (positions as given).
ExprPtr makeIdentifier(std::vector<std::string> names, SourcePos pos);
ExprPtr makeLiteral(LiteralKind kind, std::string text, SourcePos pos);
ExprPtr makeCall(std::string name, std::vector<ExprPtr> args, SourcePos pos);

/// Milliseconds of a kInterval literal: INTERVAL '1' MINUTE -> 60000. Accepts an optional sign and a
/// decimal fraction for SECOND ('1.5' SECOND -> 1500). Throws SqlError at the literal's position when
/// the text is not a number or overflows.
int64_t intervalMillis(const Expr& interval_literal);
/// Months of a year-month kInterval literal: INTERVAL '2' YEAR -> 24, INTERVAL '-3' MONTH -> -3. Throws
/// SqlError at the literal's position when the text is not a whole number or overflows.
int64_t intervalMonths(const Expr& interval_literal);
/// True for INTERVAL ... MONTH / YEAR literals.
bool isYearMonthInterval(const Expr& e);

// ---------------------------------------------------------------------------------------------
// Windows of OVER and ORDER BY items (ast_window.cc)
// ---------------------------------------------------------------------------------------------

/// One ORDER BY item: `expr [ASC|DESC] [NULLS FIRST|LAST]`.
struct OrderItem {
  SourcePos pos;
  ExprPtr expr;
  bool descending = false;
  /// As written; unset = Flink's default (NullCollation.LOW: ASC puts NULLs first, DESC last).
  std::optional<bool> nulls_first;

  bool nullsFirst() const { return nulls_first.value_or(!descending); }
  OrderItem clone() const;
  /// "b DESC", "a NULLS LAST" (ASC and the default null order are not printed).
  std::string toString() const;
};

enum class FrameBoundKind : uint8_t { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing, kUnboundedFollowing };

/// One end of a window frame: UNBOUNDED PRECEDING, `offset` PRECEDING, CURRENT ROW, `offset` FOLLOWING, ...
struct FrameBound {
  SourcePos pos;
  FrameBoundKind kind = FrameBoundKind::kCurrentRow;
  std::shared_ptr<const Expr> offset;  ///< kPreceding / kFollowing: a literal (number or INTERVAL)
};

/// The window of `fn(...) OVER (...)` or of `WINDOW name AS (...)`:
/// `[ref] [PARTITION BY e, ...] [ORDER BY item, ...] [ROWS|RANGE frame]`. A frame written with one bound
/// `ROWS b` means `ROWS BETWEEN b AND CURRENT ROW`. `OVER w` is parsed as a window with only `ref`; the
/// parser replaces it by the named window of the SELECT (a local ORDER BY / frame added to it).
struct OverWindow {
  SourcePos pos;            ///< OVER (or the name of a WINDOW item)
  std::string ref;          ///< a named window this one extends; empty after resolution
  SourcePos ref_pos;
  std::vector<ExprPtr> partition_by;
  std::vector<OrderItem> order_by;
  bool has_frame = false;
  bool rows = false;        ///< ROWS (true) or RANGE (false); only with has_frame
  SourcePos frame_pos;
  FrameBound lower;
  FrameBound upper;

  std::shared_ptr<OverWindow> clone() const;
  /// "(PARTITION BY a ORDER BY b DESC ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"
  std::string toString() const;
};

/// `WINDOW name AS (...)` of a SELECT.
struct NamedWindow {
  std::string name;
  std::shared_ptr<const OverWindow> window;
};

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

struct Query;

/// One item of a SELECT list: an expression with an optional alias, or `*` / `t.*`.
struct SelectItem {
  SourcePos pos;
  ExprPtr expr;                         ///< null when is_star
  std::optional<std::string> alias;     ///< AS name (or bare name)
  bool is_star = false;                 ///< `*` or `t.*`
  std::vector<std::string> star_qualifier;  ///< `t.*` -> {"t"}; empty for plain `*`
};

enum class TableRefKind : uint8_t {
  kNamed,          ///< `name` [AS alias]
  kSubquery,       ///< (query) [AS] alias
  kTableFunction,  ///< TABLE(TUMBLE(TABLE t, DESCRIPTOR(c), INTERVAL '1' HOUR)) [AS alias]; `call`
  kJoin,           ///< left JOIN right ON condition
  kLateral,        ///< LATERAL TABLE(f(args)) [AS alias [(c1, ...)]]: a table function call; `call`
};

enum class JoinType : uint8_t { kInner, kLeft, kRight, kFull, kCross };

/// A FROM item.
struct TableRef {
  TableRefKind kind = TableRefKind::kNamed;
  SourcePos pos;
  QualifiedName name;                  ///< kNamed
  std::optional<std::string> alias;    ///< kNamed, kSubquery, kTableFunction
  std::unique_ptr<Query> subquery;     ///< kSubquery
  ExprPtr call;                        ///< kTableFunction: a kCall (e.g. name "TUMBLE"); kLateral: the function call
  JoinType join_type = JoinType::kInner;  ///< kJoin
  std::unique_ptr<TableRef> left;      ///< kJoin
  std::unique_ptr<TableRef> right;     ///< kJoin
  ExprPtr condition;                   ///< kJoin ON condition (null for CROSS JOIN / comma)
  /// `AS alias (c1, c2, ...)`: new names for the item's columns, in order (empty = keep them).
  std::vector<std::string> column_aliases;
  /// kNamed: `name FOR SYSTEM_TIME AS OF expr` (a lookup or temporal join's right side, Calcite's
  /// SqlSnapshot): the period expression, else null. `system_time_pos` is the FOR keyword.
  ExprPtr system_time;
  SourcePos system_time_pos;

  std::unique_ptr<TableRef> clone() const;
};

enum class SetOpKind : uint8_t { kUnion, kIntersect, kExcept };

/// `left UNION|INTERSECT|EXCEPT [ALL|DISTINCT] right` other than UNION ALL (which a Query's `selects` list
/// holds flat). INTERSECT binds tighter than UNION and EXCEPT, as in standard SQL; MINUS is EXCEPT.
struct SetOperation {
  SourcePos pos;  ///< the operator keyword
  SetOpKind kind = SetOpKind::kUnion;
  bool all = false;
  std::shared_ptr<const Query> left;
  std::shared_ptr<const Query> right;
};

/// SELECT [DISTINCT] select_list [FROM from] [WHERE] [GROUP BY] [HAVING].
/// Two other query terms share this struct: `VALUES (row), ...` (`values` non-empty, nothing else set) and
/// a set operation (`set_op` set, nothing else).
struct SelectStmt {
  SourcePos pos;
  bool distinct = false;
  std::vector<SelectItem> select_list;
  std::unique_ptr<TableRef> from;  ///< null for SELECT without FROM
  ExprPtr where;                   ///< null when absent
  std::vector<ExprPtr> group_by;
  ExprPtr having;                  ///< null when absent
  /// WINDOW w AS (...), in order; OVER w references are already resolved against them.
  std::vector<NamedWindow> windows;
  /// VALUES (e, ...), (e, ...): one entry per row (all rows of equal width, checked by the parser).
  std::vector<std::vector<ExprPtr>> values;
  std::shared_ptr<const SetOperation> set_op;  ///< shared by clones

  SelectStmt clone() const;
};

/// One `name [(c, ...)] AS (query)` of a WITH clause.
struct WithItem {
  SourcePos pos;
  std::string name;
  std::vector<std::string> columns;    ///< optional explicit column names
  std::shared_ptr<const Query> query;  ///< shared by clones
};

/// A query: `[WITH item, ...]` then one or more query terms joined by UNION ALL (other set operations are
/// one term with `set_op`), then an optional `ORDER BY ...` and `LIMIT n` / `OFFSET m [ROWS]` /
/// `FETCH FIRST|NEXT n ROWS ONLY` over the whole.
struct Query {
  SourcePos pos;
  /// WITH items in order; each sees the ones before it.
  std::vector<WithItem> with;
  std::vector<SelectStmt> selects;  ///< size >= 1
  std::vector<OrderItem> order_by;
  SourcePos order_pos;              ///< ORDER
  ExprPtr limit;                    ///< LIMIT n / FETCH n; null when absent
  ExprPtr offset;                   ///< OFFSET m; null when absent

  std::unique_ptr<Query> clone() const;
};

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

enum class ColumnKind : uint8_t {
  kPhysical,  ///< name TYPE
  kComputed,  ///< name AS expr
  kMetadata,  ///< name TYPE METADATA [FROM 'key'] [VIRTUAL]
};

/// One column of CREATE TABLE. Column comments are dropped.
struct ColumnDef {
  SourcePos pos;
  std::string name;
  ColumnKind kind = ColumnKind::kPhysical;
  types::LogicalType type;               ///< kPhysical, kMetadata (NOT NULL -> nullable = false)
  ExprPtr expr;                          ///< kComputed
  std::optional<std::string> metadata_key;  ///< kMetadata FROM 'key'
  bool metadata_virtual = false;         ///< kMetadata VIRTUAL

  ColumnDef clone() const;
};

/// WATERMARK FOR column AS expr.
struct WatermarkDef {
  SourcePos pos;
  std::string column;
  ExprPtr expr;

  WatermarkDef clone() const { return WatermarkDef{pos, column, expr ? expr->clone() : nullptr}; }
};

/// One 'key' = 'value' of a WITH clause (order of the script kept).
struct TableOption {
  SourcePos pos;  ///< position of the key
  std::string key;
  std::string value;
};

/// CREATE TABLE [IF NOT EXISTS] name (...) [COMMENT '...'] WITH (...).
/// The features a CREATE TABLE ... LIKE clause merges, and how (FLIP-110, Flink's MergeTableLikeUtil).
enum class LikeFeature : uint8_t { kAll, kConstraints, kGenerated, kMetadata, kOptions, kPartitions, kWatermarks };
enum class LikeStrategy : uint8_t { kIncluding, kExcluding, kOverwriting };

struct LikeOption {
  SourcePos pos;
  LikeFeature feature = LikeFeature::kAll;
  LikeStrategy strategy = LikeStrategy::kIncluding;
};

/// `LIKE source [(option, ...)]` of CREATE TABLE.
struct LikeClause {
  SourcePos pos;  ///< the source table's name
  QualifiedName source;
  std::vector<LikeOption> options;  ///< as written; empty = Flink's default INCLUDING ALL OVERWRITING OPTIONS
};

struct CreateTableStmt {
  QualifiedName name;
  bool temporary = false;
  bool if_not_exists = false;
  std::vector<ColumnDef> columns;
  std::optional<WatermarkDef> watermark;
  std::vector<std::string> primary_key;  ///< PRIMARY KEY (a, b) NOT ENFORCED, or inline; empty = none
  SourcePos primary_key_pos;
  std::optional<std::string> comment;
  /// PARTITIONED BY (a, b): the partition columns in order (empty = not partitioned), each name's position.
  std::vector<std::string> partition_keys;
  std::vector<SourcePos> partition_key_pos;
  std::vector<TableOption> options;
  /// CREATE TABLE ... LIKE: merged into the fields above when the statement runs (then reset).
  std::optional<LikeClause> like;
  /// CREATE TABLE ... AS query (CTAS): the columns come from the query when the statement runs.
  std::shared_ptr<const Query> as_query;
  SourcePos as_pos;  ///< AS

  CreateTableStmt clone() const;
};

/// CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(col, ...)] AS query.
struct CreateViewStmt {
  QualifiedName name;
  bool temporary = false;
  bool if_not_exists = false;
  std::vector<std::string> column_names;  ///< optional explicit column names
  std::unique_ptr<Query> query;
  std::string query_text;                 ///< the query as written (SHOW CREATE VIEW)
};

/// CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'identifier' [LANGUAGE JAVA | SCALA | PYTHON].
struct CreateFunctionStmt {
  QualifiedName name;
  SourcePos name_pos;
  std::string identifier;  ///< the class name
  SourcePos identifier_pos;
  bool temporary = false;
  bool system = false;
  bool if_not_exists = false;
  std::string language = "JAVA";  ///< upper case
  SourcePos language_pos;
};

/// INSERT INTO|OVERWRITE target [(col, ...)] query.
struct InsertStmt {
  SourcePos pos;
  QualifiedName target;
  bool overwrite = false;
  std::vector<std::string> columns;  ///< empty = all columns in order
  std::unique_ptr<Query> query;

  InsertStmt clone() const;
};

enum class StatementKind : uint8_t {
  kCreateTable,   ///< create_table
  kCreateView,    ///< create_view
  kInsert,        ///< insert
  kQuery,         ///< query
  kSet,           ///< SET 'k' = 'v' (key and value set) or bare SET (both empty: list options)
  kReset,         ///< RESET 'k' (key set) or bare RESET (key empty: reset all)
  kExplain,       ///< explained (+ explain_details)
  kStatementSet,  ///< statement_set: EXECUTE STATEMENT SET BEGIN ... END / BEGIN STATEMENT SET; ... END
  kShow,          ///< `show` = CATALOGS, DATABASES, TABLES, VIEWS, FUNCTIONS, USER FUNCTIONS, MODULES, FULL MODULES,
                  ///<  CURRENT CATALOG, CURRENT DATABASE, CREATE TABLE, CREATE VIEW, COLUMNS (the last three with
                  ///<  `object`; TABLES / VIEWS / FUNCTIONS with `object` = the database of FROM / IN, if given)
  kDescribe,      ///< DESCRIBE | DESC `object`
  kDropTable,     ///< DROP [TEMPORARY] TABLE [IF EXISTS] `object`
  kDropView,      ///< DROP [TEMPORARY] VIEW [IF EXISTS] `object`
  kUse,           ///< USE [CATALOG] `object` (`show` = "CATALOG" for USE CATALOG)
  kAlterTable,    ///< ALTER TABLE `object` RENAME TO `new_name` | SET (options) | RESET (keys)
  kAlterView,     ///< ALTER VIEW `object` RENAME TO `new_name` | AS query (create_view)
  kCreateFunction,  ///< create_function
  kDropFunction,    ///< DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] `object` (function_temporary / _system)
};

/// One statement of a script.
struct Statement {
  StatementKind kind = StatementKind::kQuery;
  SourcePos pos;     ///< first token
  SourcePos end_pos; ///< last token's start (for spans)
  std::string text;  ///< the statement's source text, from its first to its last token (no ';')

  std::unique_ptr<CreateTableStmt> create_table;
  std::unique_ptr<CreateViewStmt> create_view;
  std::unique_ptr<CreateFunctionStmt> create_function;
  bool function_temporary = false;  ///< kDropFunction: DROP TEMPORARY [SYSTEM] FUNCTION
  bool function_system = false;
  std::unique_ptr<InsertStmt> insert;
  std::unique_ptr<Query> query;
  std::optional<std::string> key;    ///< kSet, kReset
  std::optional<std::string> value;  ///< kSet
  std::unique_ptr<Statement> explained;      ///< kExplain
  std::vector<std::string> explain_details;  ///< EXPLAIN CHANGELOG_MODE, JSON_EXECUTION_PLAN ... (upper)
  std::vector<InsertStmt> statement_set;     ///< kStatementSet: the INSERTs in order
  std::string show;                          ///< kShow: what, upper case, words joined by one space
  QualifiedName object;                      ///< kShow CREATE ..., kDescribe, kDropTable, kDropView
  SourcePos object_pos;
  bool if_exists = false;                    ///< kDropTable, kDropView, kAlterTable
  /// kShow TABLES / VIEWS / FUNCTIONS / COLUMNS: `[NOT] LIKE | ILIKE 'pattern'`, when given.
  std::optional<std::string> like_pattern;
  bool like_not = false;
  bool like_case_insensitive = false;
  /// kAlterTable / kAlterView RENAME TO.
  QualifiedName new_name;
  /// kAlterTable SET (options) / RESET (keys: `options` with empty values).
  std::vector<TableOption> options;
  std::string alter;                         ///< kAlterTable / kAlterView: RENAME, SET, RESET, AS
};

}  // namespace sluice::table::sql

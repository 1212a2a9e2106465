#pragma once
/// Module-internal: the accumulators of the aggregation operators (Flink's generated AggsHandleFunction
/// plus the built-in *AggFunctions), and the byte encoding of group keys. Used by GroupAggregateOperator
/// and WindowAggregateOperator only; other modules must not include this header.
/// Threading: none of these types is shared; each operator instance owns its own.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/serialization/type_serializer.h"
#include "table/runtime/aggregate_call.h"
#include "types/row_batch.h"

namespace sluice::table {
class AggregateAccumulator;  // table/functions/aggregate_function.h
}  // namespace sluice::table

namespace sluice::table::agg {

/// How a value is held in a column: int64_t, double or string bytes (see logical_type.h).
enum class Phys : uint8_t { kLong, kDouble, kString };

/// Physical class of `t`.
Phys physOf(const types::LogicalType& t);

/// One aggregate result (or a MIN/MAX candidate), of the physical class of its type.
struct AggValue {
  bool is_null = true;
  int64_t l = 0;
  double d = 0;
  std::string s;
};

/// The running state of one aggregate of one group: `count` of the accumulated non-NULL values (rows
/// for COUNT(*)) and `value` (a sum, or the current MIN/MAX; a DOUBLE is held by its bit pattern).
struct AggSlot {
  int64_t count = 0;
  int64_t value = 0;
};

/// A multiset of one column's values: ordered by value (a value -> count map: Flink's MapView in
/// MinWithRetractAggFunction / MaxWithRetractAggFunction and in the distinct view of DistinctAggCodeGen;
/// a count that drops to 0 removes the value), or, made with `list`, in arrival order (the ListView of
/// ListAggWithRetractAggFunction and the order maps of First/LastValueWithRetractAggFunction: adding
/// appends, retracting removes the value's earliest occurrence; a retraction of an absent value is
/// ignored). For a list, "smallest" is the first value and "largest" the last.
class ValueCounter {
 public:
  virtual ~ValueCounter() = default;
  /// Adds `delta` to the count of the (non-NULL) value at `row` of `column`; returns the new count.
  virtual int64_t add(const types::Column& column, size_t row, int64_t delta) = 0;
  /// The smallest (`max` false) or largest value with a positive count, into `out`; false when none.
  virtual bool extreme(bool max, AggValue& out) const = 0;
  /// Drops every value but the extreme one (MIN/MAX over insert-only input needs no history).
  virtual void keepOnlyExtreme(bool max) = 0;
  /// Adds every value of `other` (a counter of the same class and kind) to this one: a map adds the
  /// counts, a list appends other's values after its own (the merge of two session windows, the earlier
  /// one first). When `appeared` is not null, each value whose count was 0 here and is positive after
  /// the merge is appended to it (the distinct view forwards those to the inner aggregate).
  virtual void mergeFrom(const ValueCounter& other, std::vector<AggValue>* appeared) = 0;
  /// Number of distinct values held.
  virtual size_t size() const = 0;
  /// Physical class of the values.
  virtual Phys phys() const = 0;
  /// True for an arrival-ordered list.
  virtual bool isList() const { return false; }
  /// Appends the (string) values in order, `separator` between them, to `out` (LISTAGG); false when empty.
  virtual bool join(std::string_view separator, std::string& out) const {
    (void)separator;
    (void)out;
    return false;
  }
  /// Writes the entries in value order: varint number of entries, then per entry the value (int64 or
  /// the double's bits, 8 bytes; a string as varint length + bytes) and its int64 count.
  virtual void serialize(runtime::DataOutputView& out) const = 0;
  /// A fresh, empty counter over values of class `p` (an arrival-ordered list when `list`).
  static std::unique_ptr<ValueCounter> make(Phys p, bool list = false);
  /// A counter of class `p` read from serialize()'s form. Throws InputError on malformed bytes (a value
  /// twice, a zero count, truncation). A list's form: varint number of values, then each value.
  static std::unique_ptr<ValueCounter> deserialize(Phys p, runtime::DataInputView& in, bool list = false);
};

/// The accumulator of one user-defined aggregate call in one group: the function's object with the
/// function that made it (so a snapshot can serialize it without the handler), or, restored from a
/// snapshot and not read by the handler yet, its snapshot bytes (`acc` null): the serializer of the state
/// layer is static and cannot know the function. AggsHandler turns the bytes into the object on first use.
struct UserAccumulator {
  UserAccumulator();
  UserAccumulator(UserAccumulator&&) noexcept;
  UserAccumulator& operator=(UserAccumulator&&) noexcept;
  ~UserAccumulator();
  std::shared_ptr<const AggregateFunction> function;  ///< set together with `acc`
  std::unique_ptr<AggregateAccumulator> acc;
  std::string bytes;  ///< the snapshot form while `acc` is null
};

/// All accumulators of one group (one key, or one key in one window). `record_count` is the number of
/// accumulated minus retracted rows: Flink's RecordCounter over the COUNT(*) the planner adds when the
/// input may retract.
struct Accumulators {
  int64_t record_count = 0;
  std::vector<AggSlot> slots;                            ///< one per aggregate call
  std::vector<std::unique_ptr<ValueCounter>> counters;   ///< only for calls that need a value map
  std::vector<UserAccumulator> user;                     ///< one per user-defined aggregate call, in order
};

/// The snapshot form of Accumulators, as the state layer's descriptors take a serializer (static
/// serialize / deserialize, like TypeSerializer): u8 version (1, or 2 when there are user accumulators),
/// int64 record_count, varint number of slots and per slot int64 count and value, varint number of
/// counters and per counter u8 Phys (plus kListFlag for a list) then ValueCounter::serialize; version 2
/// then a varint number of user accumulators and per one a varint length and the bytes of its function's
/// serialize(). Used by snapshots and restores, and by RocksDB's reads and writes of a key. Any thread
/// (a user accumulator's serialize runs on the snapshot thread: AggregateFunction is thread-safe).
struct AccumulatorsSerializer {
  static void serialize(const Accumulators& acc, runtime::DataOutputView& out);
  /// Throws InputError on malformed bytes (unknown version or Phys, truncation).
  static Accumulators deserialize(runtime::DataInputView& in);
  /// A deep copy (the heap backend's copy-on-write; Accumulators has no copy constructor).
  static Accumulators copy(const Accumulators& acc);
};

/// Evaluates a list of aggregate calls over rows of one input type (Flink's AggsHandleFunction).
/// `with_retraction` selects Flink's *WithRetract variants: MIN/MAX keep every value with its count so
/// the next value takes over when the current extreme is retracted. Without it, retract() is an
/// internal error and MIN/MAX keep only the current extreme.
class AggsHandler {
 public:
  /// Throws UserError when an argument index is out of range or a type is not supported (via
  /// AggregateCall::resultType), and InternalError when a call's `result_type` is set and differs from
  /// the type Flink derives.
  AggsHandler(const types::RowType& input, const std::vector<AggregateCall>& calls, bool with_retraction);

  size_t numAggs() const { return descs_.size(); }
  /// The result type of each call (AggregateCall::resultType of its argument).
  const std::vector<types::LogicalType>& resultTypes() const { return result_types_; }

  /// Fresh accumulators (Flink's createAccumulators).
  void init(Accumulators& acc) const;
  /// Checks that restored accumulators have the shape init() gives (as many slots as calls, counters of
  /// the same classes), so a checkpoint of another query is refused instead of misread. Throws
  /// InputError saying what differs. Restored user-defined accumulators are read back by their function
  /// here (an InputError when it refuses the bytes).
  void checkLayout(Accumulators& acc) const;
  void checkLayout(Accumulators&& acc) const { checkLayout(acc); }
  /// Adds row `row` of `batch` (an input row) to `acc`.
  void accumulate(Accumulators& acc, const types::RowBatch& batch, size_t row) const;
  /// Adds the accumulators `from` into `into` (Flink's AggsHandleFunction.merge, used when session
  /// windows merge): COUNT / SUM / AVG add, MIN / MAX keep the extreme, DISTINCT merges the value counts
  /// and forwards the values new to `into`, FIRST_VALUE / LAST_VALUE / LISTAGG take `into`'s values
  /// before `from`'s. Throws UserError on DECIMAL overflow.
  void merge(Accumulators& into, const Accumulators& from) const;
  /// Takes row `row` of `batch` out of `acc`. Only with `with_retraction`.
  void retract(Accumulators& acc, const types::RowBatch& batch, size_t row) const;
  /// The current results, one per call (Flink's getValue). Throws UserError on DECIMAL overflow.
  void getValue(const Accumulators& acc, std::vector<AggValue>& out) const;
  /// Field-by-field equality of two results (Flink's generated RecordEqualiser).
  bool equal(const std::vector<AggValue>& a, const std::vector<AggValue>& b) const;
  /// Appends `values` as one row to columns first_column.. of `out` (kinds are not touched).
  void appendValues(const std::vector<AggValue>& values, types::RowBatch& out, size_t first_column) const;

 private:
  struct Desc {
    AggKind kind;
    int arg;
    int filter = -1;     ///< BOOLEAN column gating this call (FILTER (WHERE ...)), or -1
    bool distinct;       ///< COUNT/SUM/AVG DISTINCT: the counter is the distinct view
    Phys arg_phys;
    types::TypeId arg_id;
    types::LogicalType arg_type;
    int32_t arg_scale;
    Phys result_phys;
    int counter = -1;    ///< index into Accumulators::counters, or -1
    std::string name;
    std::string separator;  ///< LISTAGG
    // kUser:
    std::shared_ptr<const AggregateFunction> function;
    std::vector<int> user_args;
    std::vector<uint8_t> user_consts;  ///< all 0: every argument is a column
    types::LogicalType result_type;
    std::string call_text;  ///< the call as written (failures name it)
    int user = -1;  ///< index into Accumulators::user
  };
  void addUserCall(const AggregateCall& c, const types::RowType& input, Desc d);

  void update(Accumulators& acc, const types::RowBatch& batch, size_t row, int64_t delta) const;
  void applyValue(const Desc& d, AggSlot& slot, ValueCounter* counter, const types::Column& col, size_t row,
                  int64_t delta) const;
  /// Adds (or with `negate` subtracts) `v` — an int64, or a double's bits for DOUBLE / FLOAT arguments —
  /// to the SUM / AVG sum `sum` by the argument type's rules.
  void addToSum(const Desc& d, int64_t& sum, int64_t v, bool negate) const;
  /// Keeps the smaller (MIN) or larger (MAX) of `slot` and a candidate `v` (int64 or double bits).
  static void keepExtreme(const Desc& d, AggSlot& slot, int64_t v);
  /// The user accumulator of call `d` in `acc`, made from its restored bytes first when needed.
  AggregateAccumulator& userAccumulator(Accumulators& acc, const Desc& d) const;
  /// Accumulates (delta > 0) or retracts row `row` of `batch` into the user accumulator of `d`.
  void applyUser(const Desc& d, Accumulators& acc, const types::RowBatch& batch, size_t row, int64_t delta) const;
  /// The result of the user call `d` into `v`.
  void userValue(const Desc& d, const Accumulators& acc, AggValue& v) const;
  /// Accumulates the single argument value `v` (a distinct value that appeared in a merge).
  void accumulateUserValue(const Desc& d, Accumulators& acc, const AggValue& v) const;

  std::vector<Desc> descs_;
  std::vector<types::LogicalType> result_types_;
  struct CounterShape {
    Phys phys;
    bool list;
  };
  std::vector<CounterShape> counter_shapes_;  ///< class of each counter's values, and whether it is a list
  size_t num_user_ = 0;                       ///< user-defined aggregate calls
  bool with_retraction_;
  mutable std::vector<const types::Column*> user_cols_;  ///< reused argument list of a user call
  mutable std::vector<types::Column> user_results_;      ///< per user call: the one-row column getValue writes
};

/// Encodes the group-key columns of a row into a compact byte string usable as a hash-map key:
/// per column one NULL byte, then 8 value bytes (int64/double) or a u32 length and the bytes.
class KeyCodec {
 public:
  /// Throws UserError when a key index is out of range.
  KeyCodec(const types::RowType& input, std::vector<int> key_columns);
  /// Replaces `out` with the key of row `row` of `batch`.
  void encode(const types::RowBatch& batch, size_t row, std::string& out) const;
  /// Appends the key columns decoded from `key` to columns first_column.. of `out`. `key` must be
  /// valid (written by encode(), or checked with isValid() when it comes from a checkpoint).
  void decodeAppend(std::string_view key, types::RowBatch& out, size_t first_column) const;
  /// True when `key` is exactly one encoded key of these columns (restored bytes are untrusted).
  bool isValid(std::string_view key) const;
  const std::vector<int>& keyColumns() const { return key_columns_; }

 private:
  std::vector<int> key_columns_;
  std::vector<Phys> phys_;
};

/// A KeyCodec over every column of `t`: a whole row as bytes (kept in state, compared, decoded to emit).
inline KeyCodec rowCodec(const types::RowType& t) {
  std::vector<int> all;
  for (size_t i = 0; i < t.size(); ++i) all.push_back(static_cast<int>(i));
  return KeyCodec(t, std::move(all));
}

/// The output row of an aggregation: the group key columns of `input_type` (names kept), then one
/// column per call named after it (or EXPR$i) with its result type. Validates like AggsHandler.
types::RowType keysAndAggregatesType(const types::RowType& input_type, const std::vector<int>& group_keys,
                                     const std::vector<AggregateCall>& calls, bool with_retraction);

}  // namespace sluice::table::agg

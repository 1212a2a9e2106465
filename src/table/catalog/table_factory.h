#pragma once
/// Connector factories (Flink's DynamicTableSourceFactory / DynamicTableSinkFactory), found by the
/// `connector` option. Connectors (src/connectors) implement them; the planner looks them up in a
/// FactoryRegistry that the caller fills (connectors::registerBuiltinConnectors).

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "types/logical_type.h"

namespace sluice {
class Configuration;
}
namespace sluice::runtime {
class StreamOperatorFactory;
class BatchWatermarkGenerator;
}

namespace sluice::table {

class LookupTableLoader;  // table/runtime/lookup_join.h

/// A `name TYPE METADATA [FROM 'key'] [VIRTUAL]` column of a table.
struct MetadataColumn {
  std::string name;
  std::string key;  ///< the FROM key, else the column name
  types::LogicalType type;
  bool is_virtual = false;
};

/// A table as the connector sees it: physical columns (computed columns and watermarks are the
/// planner's), metadata columns, WITH options (keys as written), primary key and PARTITIONED BY column
/// indexes into `physical_type`.
struct ResolvedTable {
  std::string name;                           ///< e.g. "default_catalog.default_database.flights" or "flights"
  types::RowType physical_type;
  std::map<std::string, std::string> options;
  std::vector<int> primary_key;
  std::vector<MetadataColumn> metadata;       ///< in declaration order
  /// PARTITIONED BY columns in their declared order (indexes into `physical_type`); empty = not partitioned.
  std::vector<int> partition_keys;
};

/// The kinds of rows a source or plan node emits (Flink's ChangelogMode): insert-only (+I), a full
/// retract changelog (+I/-U/+U/-D, e.g. debezium-json), or upserts by primary key (+I/+U/-D without
/// -U, e.g. upsert-kafka).
enum class ChangelogMode {
  kInsertOnly,
  kAll,
  kUpsert,
};

/// "[I]", "[I,UB,UA,D]", "[I,UA,D]" as Flink prints a ChangelogMode in explain.
inline const char* changelogModeText(ChangelogMode m) {
  switch (m) {
    case ChangelogMode::kInsertOnly: return "[I]";
    case ChangelogMode::kAll: return "[I,UB,UA,D]";
    case ChangelogMode::kUpsert: return "[I,UA,D]";
  }
  return "?";
}

/// What a source declares to the planner.
class ScanTableSource {
 public:
  virtual ~ScanTableSource() = default;
  /// Operator factory for the source subtasks; the operator emits RowBatches of `physical_type`.
  virtual std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const = 0;
  /// `scan.parallelism` when set (FLIP-367: reported through the provider, never set behind the planner).
  virtual std::optional<int> parallelism() const { return std::nullopt; }
  /// The rows the source emits (Flink's ScanTableSource#getChangelogMode); insert-only unless the
  /// format is a changelog format. A source that is not insert-only needs a primary key when it has a
  /// configured parallelism (FLIP-367 hashes its output on the key).
  virtual ChangelogMode changelogMode() const { return ChangelogMode::kInsertOnly; }
  /// True when the source ends by itself (a file, datagen with number-of-rows).
  virtual bool isBounded() const = 0;
  /// Short description for explain, e.g. "filesystem path=..., format=csv".
  virtual std::string summary() const = 0;
  /// Projection push-down (Flink's SupportsProjectionPushDown): from now on produce only the physical
  /// fields at `fields` (indexes into the table's physical row type, ascending, non-empty), in that
  /// order. Returns false when the source cannot, and then keeps producing every field.
  /// Called on the client thread before operatorFactory().
  virtual bool applyProjection(const std::vector<int>& fields) {
    (void)fields;
    return false;
  }
  /// Nested projection push-down (Flink's SupportsProjectionPushDown#supportsNestedProjection and
  /// applyProjection(int[][])): from now on produce one column per entry of `paths`, in that order, each
  /// a path of field indexes from a top-level physical field down through ROW fields to a field that is
  /// no ROW (a NULL row gives NULL fields). The planner calls it for every table with a ROW column, as
  /// ROW values do not flow through batches; returning false refuses the table ("ROW values are not
  /// supported yet"). May be called again with a subset. Called on the client thread before
  /// operatorFactory().
  virtual bool applyNestedProjection(const std::vector<std::vector<int>>& paths) {
    (void)paths;
    return false;
  }
  /// Metadata the source can read (Flink's SupportsReadingMetadata#listReadableMetadata): key -> the
  /// type it produces. Empty: the source has none (a METADATA column is then an error).
  virtual std::map<std::string, types::LogicalType> listReadableMetadata() const { return {}; }
  /// From now on append one column per entry of `columns` (keys from listReadableMetadata, declared
  /// types) after the physical fields (Flink's applyReadableMetadata). Called on the client thread
  /// before operatorFactory(), at most once. Throws UserError naming the column when the declared type
  /// cannot hold the metadata. A source with metadata columns gets no projection push-down.
  virtual void applyReadableMetadata(const std::vector<MetadataColumn>& columns) { (void)columns; }
  /// Watermark push-down (Flink's SupportsWatermarkPushDown): from now on generate the table's
  /// watermarks inside the source, per split, with `generator` (over the rows the source emits, metadata
  /// columns included). Returns false when the source cannot; the planner then assigns them downstream.
  /// Called on the client thread after applyReadableMetadata and before operatorFactory().
  virtual bool applyWatermark(std::shared_ptr<const runtime::BatchWatermarkGenerator> generator) {
    (void)generator;
    return false;
  }
  /// Lookup joins (Flink's LookupTableSource with a full cache): a loader that reads the whole table into
  /// a lookup join's cache, or null when the table cannot be looked up. Called on the client thread.
  virtual std::shared_ptr<const LookupTableLoader> lookupLoader() const { return nullptr; }
};

/// What a sink declares to the planner.
class DynamicTableSink {
 public:
  virtual ~DynamicTableSink() = default;
  /// Operator factory for the sink subtasks; the operator receives RowBatches of `physical_type`.
  virtual std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const = 0;
  /// `sink.parallelism` when set.
  virtual std::optional<int> parallelism() const { return std::nullopt; }
  /// False for insert-only sinks (filesystem): the planner rejects updating input.
  virtual bool acceptsUpdates() const = 0;
  /// True when the sink writes a PARTITIONED BY table (Flink's SupportsPartitioning); the planner refuses
  /// a partitioned table whose sink does not.
  virtual bool supportsPartitioning() const { return false; }
  virtual std::string summary() const = 0;
};

/// One connector, e.g. "filesystem", "datagen", "print", "blackhole".
class DynamicTableFactory {
 public:
  virtual ~DynamicTableFactory() = default;
  virtual std::string identifier() const = 0;
  /// Option keys the connector accepts besides `connector`; '#' stands for a field name
  /// ("fields.#.kind"). An option outside the set fails validation naming it and listing these.
  virtual std::set<std::string> supportedOptions() const = 0;
  /// Throws UserError naming the table and option on a bad value. Null when the connector has no source.
  virtual std::unique_ptr<ScanTableSource> createSource(const ResolvedTable& table, const Configuration& config) const;
  /// Null when the connector has no sink.
  virtual std::unique_ptr<DynamicTableSink> createSink(const ResolvedTable& table, const Configuration& config) const;
};

/// Registry of factories by identifier.
class FactoryRegistry {
 public:
  void add(std::shared_ptr<const DynamicTableFactory> factory);
  /// The factory for table.options["connector"]; validates the option keys first. Throws UserError:
  /// "Table 't' has no 'connector' option", "Could not find any factory for identifier 'x' ... Available
  /// factory identifiers are: ...", or Flink's "Unsupported options found for 'x'. Unsupported options: ...
  /// Supported options: ..." listing.
  const DynamicTableFactory& find(const ResolvedTable& table) const;
  std::vector<std::string> identifiers() const;

 private:
  std::map<std::string, std::shared_ptr<const DynamicTableFactory>> factories_;
};

}  // namespace sluice::table

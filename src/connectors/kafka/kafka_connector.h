#pragma once
/// The `kafka` and `upsert-kafka` table factories (Flink's KafkaDynamicTableFactory and
/// UpsertKafkaDynamicTableFactory). Options: see kafka_spec.h and src/connectors/kafka/README.md.

#include <memory>
#include <set>
#include <string>

#include "table/catalog/table_factory.h"

namespace sluice::connectors::kafka {

/// `'connector' = 'kafka'` (or `'upsert-kafka'` when `upsert`).
class KafkaTableFactory final : public table::DynamicTableFactory {
 public:
  explicit KafkaTableFactory(bool upsert) : upsert_(upsert) {}
  std::string identifier() const override { return upsert_ ? "upsert-kafka" : "kafka"; }
  std::set<std::string> supportedOptions() const override;
  /// Throws UserError naming the table and option on a missing or bad option (nothing is contacted yet:
  /// brokers and topics are checked when the job starts).
  std::unique_ptr<table::ScanTableSource> createSource(const table::ResolvedTable& table,
                                                       const Configuration& config) const override;
  /// As createSource; a sink writes one topic.
  std::unique_ptr<table::DynamicTableSink> createSink(const table::ResolvedTable& table,
                                                      const Configuration& config) const override;

 private:
  bool upsert_;
};

/// Adds both factories to `registry`.
void registerKafkaConnectors(table::FactoryRegistry& registry);

}  // namespace sluice::connectors::kafka

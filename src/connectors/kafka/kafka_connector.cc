#include "connectors/kafka/kafka_connector.h"

#include "connectors/connector_options.h"
#include "connectors/kafka/kafka_sink.h"
#include "connectors/kafka/kafka_source.h"

namespace sluice::connectors::kafka {

std::set<std::string> KafkaTableFactory::supportedOptions() const { return kafkaOptionKeys(upsert_); }

std::unique_ptr<table::ScanTableSource> KafkaTableFactory::createSource(const table::ResolvedTable& table,
                                                                         const Configuration&) const {
  auto spec = std::make_shared<KafkaTableSpec>(parseKafkaTable(table, upsert_, true));
  return std::make_unique<KafkaTableSource>(std::move(spec),
                                            parallelismOption(table.options, "scan.parallelism", table.name));
}

std::unique_ptr<table::DynamicTableSink> KafkaTableFactory::createSink(const table::ResolvedTable& table,
                                                                        const Configuration&) const {
  auto spec = std::make_shared<KafkaTableSpec>(parseKafkaTable(table, upsert_, false));
  return std::make_unique<KafkaTableSink>(std::move(spec),
                                          parallelismOption(table.options, "sink.parallelism", table.name));
}

void registerKafkaConnectors(table::FactoryRegistry& registry) {
  registry.add(std::make_shared<KafkaTableFactory>(false));
  registry.add(std::make_shared<KafkaTableFactory>(true));
}

}  // namespace sluice::connectors::kafka

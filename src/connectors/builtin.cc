#include "connectors/builtin.h"

#include <memory>

#include "connectors/datagen_connector.h"
#include "connectors/filesystem_connector.h"
#include "connectors/kafka/kafka_connector.h"
#include "connectors/nexmark/nexmark_connector.h"
#include "connectors/nexmark/nexmark_functions.h"
#include "connectors/print_connector.h"

namespace sluice::connectors {

void registerBuiltinConnectors(table::FactoryRegistry& registry) {
  registry.add(std::make_shared<FileSystemTableFactory>());
  registry.add(std::make_shared<DataGenTableFactory>());
  registry.add(std::make_shared<PrintTableFactory>());
  registry.add(std::make_shared<BlackHoleTableFactory>());
  registry.add(std::make_shared<nexmark::NexmarkTableFactory>());
  nexmark::registerNexmarkFunctions();  // q14's count_char
  kafka::registerKafkaConnectors(registry);
}

}  // namespace sluice::connectors

#pragma once
/// Registration of the connectors this module provides.

#include "table/catalog/table_factory.h"

namespace sluice::connectors {

/// Adds the built-in connector factories to `registry`: filesystem, datagen, print, blackhole,
/// kafka, upsert-kafka and nexmark (and the Nexmark queries' functions, nexmark_functions.h).
/// Call once on the client thread before planning.
void registerBuiltinConnectors(table::FactoryRegistry& registry);

}  // namespace sluice::connectors

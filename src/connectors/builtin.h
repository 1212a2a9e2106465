#pragma once
/// Registration of the connectors this module provides.

#include "table/catalog/table_factory.h"

namespace sluice::connectors {

/// Adds the built-in connector factories to `registry`: filesystem (csv), datagen, print, blackhole.
/// Call once on the client thread before planning.
void registerBuiltinConnectors(table::FactoryRegistry& registry);

}  // namespace sluice::connectors

#include "graph/transformation.h"

namespace sluice::graph {

const char* shipStrategyName(ShipStrategy s) {
  switch (s) {
    case ShipStrategy::kForward: return "FORWARD";
    case ShipStrategy::kRebalance: return "REBALANCE";
    case ShipStrategy::kRescale: return "RESCALE";
    case ShipStrategy::kShuffle: return "SHUFFLE";
    case ShipStrategy::kBroadcast: return "BROADCAST";
    case ShipStrategy::kGlobal: return "GLOBAL";
    case ShipStrategy::kHash: return "HASH";
    case ShipStrategy::kCustom: return "CUSTOM";
  }
  return "UNKNOWN";
}

}  // namespace sluice::graph

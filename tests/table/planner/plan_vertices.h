#pragma once
// The JobGraph of `explain --format=json` as a list of vertices, for plan tests (FLIP-367 and the
// connectors' plan tests).

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/config.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"

namespace sluice::table::testing {

/// One vertex of the plan: its operator names, parallelism and the ship strategy of each input.
struct Vertex {
  std::string op;
  int parallelism = 0;
  std::vector<std::string> inputs;
};

/// The vertices of the single job planned from `script` at default parallelism `p`, in JSON order.
inline std::vector<Vertex> planVertices(const std::string& script, int p) {
  Configuration config;
  config.set("parallelism.default", std::to_string(p));
  auto registry = std::make_shared<FactoryRegistry>();
  connectors::registerBuiltinConnectors(*registry);
  TableEnvironment env(config, registry);
  nlohmann::json doc = nlohmann::json::parse(env.explainScript(script, true));
  std::vector<Vertex> out;
  for (const auto& n : doc["nodes"]) {
    Vertex v;
    v.op = n["operator"].get<std::string>();
    v.parallelism = n["parallelism"].get<int>();
    if (n.contains("inputs"))
      for (const auto& in : n["inputs"]) v.inputs.push_back(in["ship_strategy"].get<std::string>());
    out.push_back(v);
  }
  return out;
}

}  // namespace sluice::table::testing

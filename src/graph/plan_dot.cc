// Graphviz rendering of JSON plans (see plan.h).

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "graph/plan.h"

namespace sluice::graph {

namespace {

using Json = nlohmann::ordered_json;

// Light fills for slot sharing groups, darker borders for regions (ColorBrewer Set3 / Dark2).
constexpr const char* kGroupColors[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                        "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd"};
constexpr const char* kRegionColors[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a",
                                         "#66a61e", "#e6ab02", "#a6761d", "#666666"};

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

std::string html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string vertexLabel(const Json& node) {
  std::string label = "<<TABLE BORDER=\"1\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"3\" BGCOLOR=\"white\">";
  label += fmt::format("<TR><TD ALIGN=\"LEFT\"><B>{}</B></TD></TR>", html(node.at("operator").get<std::string>()));
  label += fmt::format("<TR><TD ALIGN=\"LEFT\">parallelism {}</TD></TR>", node.at("parallelism").get<int>());
  if (node.contains("operators") && node.at("operators").size() > 1) {
    for (const auto& op : node.at("operators")) {
      label += fmt::format("<TR><TD ALIGN=\"LEFT\">&#8226; {}</TD></TR>", html(op.get<std::string>()));
    }
  }
  return label + "</TABLE>>";
}

// One job's clusters, vertices and edges; node names are prefixed with `prefix`.
std::string jobBody(const Json& plan, const std::string& prefix, std::map<std::string, int>& group_colors,
                    const std::string& indent) {
  const Json& nodes = plan.at("nodes");
  std::map<std::string, std::string> node_name;  // vertex id -> dot node name
  // region -> group -> vertex indexes, in vertex order.
  std::map<int, std::map<std::string, std::vector<size_t>>> layout;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Json& n = nodes[i];
    node_name[n.at("id").get<std::string>()] = fmt::format("{}v{}", prefix, i);
    const int region = n.contains("pipelined_region") ? n.at("pipelined_region").get<int>() : 0;
    const std::string group = n.contains("slot_sharing_group") ? n.at("slot_sharing_group").get<std::string>() : "default";
    layout[region][group].push_back(i);
    group_colors.emplace(group, static_cast<int>(group_colors.size()));
  }
  std::string out;
  for (const auto& [region, groups] : layout) {
    out += fmt::format("{}subgraph cluster_{}r{} {{\n", indent, prefix, region);
    out += fmt::format("{}  label={}; style=\"rounded\"; penwidth=2; color=\"{}\"; fontcolor=\"{}\";\n", indent,
                       quote(fmt::format("pipelined region {}", region)),
                       kRegionColors[static_cast<size_t>(region) % std::size(kRegionColors)],
                       kRegionColors[static_cast<size_t>(region) % std::size(kRegionColors)]);
    int g = 0;
    for (const auto& [group, members] : groups) {
      const char* color = kGroupColors[static_cast<size_t>(group_colors[group]) % std::size(kGroupColors)];
      out += fmt::format("{}  subgraph cluster_{}r{}g{} {{\n", indent, prefix, region, g++);
      out += fmt::format("{}    label={}; style=\"filled,rounded\"; fillcolor=\"{}\"; color=\"{}\";\n", indent,
                         quote("slot sharing group " + group), color, color);
      for (size_t i : members) {
        out += fmt::format("{}    {}v{} [label={}];\n", indent, prefix, i, vertexLabel(nodes[i]));
      }
      out += indent + "  }\n";
    }
    out += indent + "}\n";
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Json& n = nodes[i];
    if (!n.contains("inputs")) continue;
    for (const Json& in : n.at("inputs")) {
      auto it = node_name.find(in.at("id").get<std::string>());
      SLUICE_CHECK(it != node_name.end(), "plan input refers to an unknown vertex");
      const std::string exchange = in.value("exchange", std::string("pipelined_bounded"));
      out += fmt::format("{}{} -> {}v{} [label={}{}];\n", indent, it->second, prefix, i,
                         quote(in.at("ship_strategy").get<std::string>() + "\n" + exchange),
                         exchange == "blocking" ? ", style=dashed" : "");
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> splitJsonDocuments(const std::string& text) {
  std::vector<std::string> docs;
  std::istringstream in(text);
  while (true) {
    in >> std::ws;
    if (in.peek() == std::char_traits<char>::eof()) break;
    Json doc;
    try {
      in >> doc;
    } catch (const nlohmann::json::exception& e) {
      throw UserError(fmt::format("Malformed JSON plan: {}", e.what()));
    }
    docs.push_back(doc.dump());
  }
  return docs;
}

std::string planJsonToDot(const std::vector<std::string>& plans) {
  std::vector<Json> parsed;
  try {
    for (const auto& p : plans) parsed.push_back(Json::parse(p));
  } catch (const nlohmann::json::exception& e) {
    SLUICE_CHECK(false, "malformed JSON plan: {}", e.what());
  }
  const std::string title = parsed.size() == 1 ? parsed[0].value("name", std::string("job")) : "jobs";
  std::string out = "digraph " + quote(title) + " {\n";
  out += "  rankdir=LR;\n  node [shape=plaintext, fontname=\"Helvetica\"];\n"
         "  edge [fontname=\"Helvetica\", fontsize=10];\n  graph [fontname=\"Helvetica\"];\n";
  std::map<std::string, int> group_colors;
  try {
    if (parsed.size() == 1) {
      out += jobBody(parsed[0], "", group_colors, "  ");
    } else {
      for (size_t j = 0; j < parsed.size(); ++j) {
        out += fmt::format("  subgraph cluster_job{} {{\n    label={};\n", j,
                           quote(fmt::format("{} ({})", parsed[j].value("name", std::string("job")),
                                             parsed[j].value("type", std::string("STREAMING")))));
        out += jobBody(parsed[j], fmt::format("j{}", j), group_colors, "    ");
        out += "  }\n";
      }
    }
  } catch (const nlohmann::json::exception& e) {
    SLUICE_CHECK(false, "JSON is not a job plan: {}", e.what());
  }
  return out + "}\n";
}

}  // namespace sluice::graph

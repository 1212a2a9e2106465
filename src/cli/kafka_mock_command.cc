#include "cli/kafka_mock_command.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "common/error.h"
#include "connectors/json_format.h"
#include "connectors/kafka/mock_cluster.h"
#include "types/row_batch.h"

namespace sluice::cli {

namespace {

using connectors::kafka::KafkaRecord;
using connectors::kafka::MockKafkaCluster;

/// Prints one line on stdout at once (scripts wait on these lines).
void say(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

/// Field `n` (1-based) of a CSV line, RFC 4180 quoting ("a ""b""" -> a "b"); nullopt when the line has
/// fewer fields.
std::optional<std::string> csvField(std::string_view line, int n) {
  std::string field;
  int index = 1;
  bool quoted = false;
  for (size_t i = 0; i <= line.size(); ++i) {
    const char c = i < line.size() ? line[i] : ',';
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else if (i < line.size()) {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      if (index == n) return field;
      ++index;
      field.clear();
    } else {
      field += c;
    }
  }
  return std::nullopt;
}

/// Splits TOPIC=FILE / NAME:PARTITIONS option values.
std::pair<std::string, std::string> splitAt(const std::string& value, char sep) {
  const size_t at = value.find(sep);
  if (at == std::string::npos) return {value, ""};
  return {value.substr(0, at), value.substr(at + 1)};
}

/// How the messages of a load get their keys: at most one of the three is set.
struct KeyRule {
  int column = 0;         ///< --key-column (1-based; 0 = none)
  std::string field;      ///< --key-field
  std::string delimiter;  ///< --key-delimiter
};

/// The key rule of every loaded topic ("" = the loads whose topic has no rule of its own), from the
/// --key-* options: a value "TOPIC=VALUE" whose TOPIC is in `load_topics` is that topic's, any other
/// value is the rule without a topic. Throws UserError naming the option and value.
std::map<std::string, KeyRule> keyRules(const KafkaMockOptions& o, const std::set<std::string>& load_topics) {
  std::map<std::string, KeyRule> rules;
  std::map<std::string, std::string> set_by;  // topic -> the option that set its rule
  auto add = [&](const char* option, const std::string& value, auto&& apply) {
    auto [topic, rest] = splitAt(value, '=');
    if (value.find('=') == std::string::npos || load_topics.count(topic) == 0) {
      topic.clear();
      rest = value;
    }
    auto [it, fresh] = set_by.emplace(topic, option);
    if (!fresh)
      throw UserError(topic.empty()
                          ? fmt::format("Use only one of --key-column, --key-field and --key-delimiter without a "
                                        "topic (got {} and {} '{}')",
                                        it->second, option, value)
                          : fmt::format("Use only one of --key-column, --key-field and --key-delimiter for topic "
                                        "'{}' (got {} and {} '{}')",
                                        topic, it->second, option, value));
    apply(rules[topic], rest);
  };
  for (const auto& v : o.key_columns)
    add("--key-column", v, [&](KeyRule& r, const std::string& n) {
      size_t used = 0;
      try {
        r.column = std::stoi(n, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != n.size() || r.column < 1)
        throw UserError(
            fmt::format("Bad --key-column '{}': expected N or TOPIC=N, N >= 1 and TOPIC a --load topic", v));
    });
  for (const auto& v : o.key_fields)
    add("--key-field", v, [&](KeyRule& r, const std::string& name) {
      if (name.empty()) throw UserError(fmt::format("Bad --key-field '{}': the field name is empty", v));
      r.field = name;
    });
  for (const auto& v : o.key_delimiters)
    add("--key-delimiter", v, [&](KeyRule& r, const std::string& d) {
      if (d.empty()) throw UserError(fmt::format("Bad --key-delimiter '{}': the delimiter is empty", v));
      r.delimiter = d;
    });
  return rules;
}

/// The records of one file, one per non-blank line, keys as `key` says. Throws UserError naming
/// file:line.
std::vector<KafkaRecord> readRecords(const std::string& path, const KeyRule& key, bool null_empty) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("Cannot read the file '{}' to load", path));
  std::optional<connectors::JsonRowDeserializer> json_key;
  std::optional<types::RowBatch> key_batch;
  if (!key.field.empty()) {
    types::RowType key_type{{key.field}, {types::LogicalType::string()}};
    json_key.emplace(key_type, connectors::JsonFormatOptions{}, connectors::JsonFlavor::kJson);
    key_batch.emplace(key_type);
  }
  std::vector<KafkaRecord> records;
  std::string line;
  int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    KafkaRecord r;
    std::string value = line;
    if (!key.delimiter.empty()) {
      const size_t at = line.find(key.delimiter);
      if (at == std::string::npos)
        throw UserError(fmt::format("{}:{}: no key delimiter '{}' in the line", path, line_number, key.delimiter));
      r.key = line.substr(0, at);
      value = line.substr(at + key.delimiter.size());
    } else if (key.column > 0) {
      r.key = csvField(line, key.column);
      if (!r.key)
        throw UserError(
            fmt::format("{}:{}: the line has fewer than {} fields (--key-column)", path, line_number, key.column));
    } else if (json_key) {
      key_batch->clear();
      json_key->parseLine(line, *key_batch, path, line_number);  // throws InputError "path:line: ..."
      if (!key_batch->column(0).isNull(0)) r.key = std::string(key_batch->column(0).getString(0));
    }
    if (!(null_empty && value.empty())) r.value = std::move(value);
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace

CLI::App* addKafkaMockCommand(CLI::App& app, KafkaMockOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "kafka-mock", "Run an in-process mock Kafka cluster (librdkafka's), create and load topics, serve until Ctrl-C");
  cmd->add_option("--brokers", o.brokers, "Number of mock brokers (default 1)")->check(CLI::Range(1, 16));
  cmd->add_option("--topic", o.topics, "Create topic NAME with PARTITIONS partitions (NAME[:PARTITIONS], repeatable)");
  cmd->add_option("--partitions", o.partitions, "Partitions of a topic first named by --load (default 1)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--load", o.loads, "Produce each line of FILE as one message to TOPIC (TOPIC=FILE, repeatable)");
  cmd->add_option("--key-column", o.key_columns,
                  "Key = field N (1-based) of each CSV line ([TOPIC=]N; with TOPIC only for the loads of TOPIC)");
  cmd->add_option("--key-field", o.key_fields,
                  "Key = field NAME of each JSON line ([TOPIC=]NAME; with TOPIC only for the loads of TOPIC)");
  cmd->add_option("--key-delimiter", o.key_delimiters,
                  "Each line is KEY<D>VALUE, as kcat -K ([TOPIC=]D; with TOPIC only for the loads of TOPIC)");
  cmd->footer(
      "A --key-* value TOPIC=VALUE whose TOPIC is a --load topic keys the loads of that topic only; any other "
      "value keys every load whose topic has no key option of its own. One key option per topic and one "
      "without a topic at most. --null-empty applies to every load.");
  cmd->add_flag("--null-empty", o.null_empty, "An empty value is produced as null, a tombstone (as kcat -Z)");
  cmd->add_flag("--exit-after-load", o.exit_after_load, "Exit after loading instead of serving until Ctrl-C");
  return cmd;
}

int runKafkaMock(const KafkaMockOptions& o) {
  std::map<std::string, int> topics;  // name -> partitions
  std::vector<std::string> order;     // the names in the order they are created
  for (const auto& spec : o.topics) {
    auto [name, count] = splitAt(spec, ':');
    int partitions = 1;
    if (!count.empty()) {
      try {
        size_t used = 0;
        partitions = std::stoi(count, &used);
        if (used != count.size()) partitions = 0;
      } catch (const std::exception&) {
        partitions = 0;
      }
    }
    if (name.empty() || partitions < 1)
      throw UserError(fmt::format("Bad --topic '{}': expected NAME or NAME:PARTITIONS with PARTITIONS >= 1", spec));
    if (!topics.emplace(name, partitions).second) throw UserError(fmt::format("--topic '{}' given twice", name));
    order.push_back(name);
  }
  std::set<std::string> load_topics;
  for (const auto& spec : o.loads) {
    auto [topic, file] = splitAt(spec, '=');
    if (topic.empty() || file.empty()) throw UserError(fmt::format("Bad --load '{}': expected TOPIC=FILE", spec));
    load_topics.insert(topic);
  }
  const std::map<std::string, KeyRule> rules = keyRules(o, load_topics);
  std::vector<std::pair<std::string, std::vector<KafkaRecord>>> loads;
  for (const auto& spec : o.loads) {
    auto [topic, file] = splitAt(spec, '=');
    if (topics.emplace(topic, o.partitions).second) order.push_back(topic);
    auto rule = rules.find(topic);
    if (rule == rules.end()) rule = rules.find("");
    // Every file is read before the cluster starts.
    loads.emplace_back(topic, readRecords(file, rule != rules.end() ? rule->second : KeyRule{}, o.null_empty));
  }

  // Signals are blocked before librdkafka starts its threads, so they all inherit the mask and only
  // sigwait below receives SIGINT / SIGTERM.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  MockKafkaCluster cluster(o.brokers);
  say("bootstrap.servers=" + cluster.bootstrapServers());
  for (const auto& name : order) {
    cluster.createTopic(name, topics[name]);
    say(fmt::format("created topic {} with {} partition{}", name, topics[name], topics[name] == 1 ? "" : "s"));
  }
  std::map<std::string, size_t> loaded;  // topic -> messages produced
  for (size_t i = 0; i < loads.size(); ++i) {
    // Messages without a key go round-robin over the partitions: even, and the same on every run.
    const int partitions = topics[loads[i].first];
    for (size_t m = 0; m < loads[i].second.size(); ++m)
      if (!loads[i].second[m].key) loads[i].second[m].partition = static_cast<int>(m % static_cast<size_t>(partitions));
    cluster.produce(loads[i].first, loads[i].second);
    loaded[loads[i].first] += loads[i].second.size();
    say(fmt::format("loaded {} messages from {} into topic {}", loads[i].second.size(), splitAt(o.loads[i], '=').second,
                    loads[i].first));
  }
  // librdkafka's mock keeps a bounded log per partition (about 5 MB in 2.0) and silently deletes the oldest
  // messages past it: count what the topic holds, so a truncated load is an error rather than lost rows.
  for (const auto& [topic, count] : loaded) {
    const size_t kept = cluster.readAll(topic).size();
    if (kept < count)
      throw UserError(fmt::format(
          "Topic '{}' keeps only {} of the {} messages loaded: librdkafka's mock cluster keeps about 5 MB per "
          "partition and drops the oldest messages beyond that. Give the topic more partitions (--topic {}:N).",
          topic, kept, count, topic));
  }
  say("ready");
  if (o.exit_after_load) return 0;
  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::fprintf(stderr, "kafka-mock: stopping on signal %d\n", signal);
  cluster.stop();
  return 0;
}

}  // namespace sluice::cli

#include "connectors/kafka/kafka_spec.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <charconv>
#include <regex>

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::connectors::kafka {

namespace {

// Kafka Java client / Flink keys that Sluice handles itself or accepts without effect; every other
// `properties.*` key goes to librdkafka.
const std::set<std::string> kOwnProperties = {
    "default.api.timeout.ms",        // metadata and offset request timeout (read here)
    "auto.offset.reset",             // reset of group-offsets without a committed offset (read here)
    "partition.discovery.interval.ms",  // partitions are discovered once, at start
    "client.id.prefix",
    "commit.offsets.on.checkpoint",  // offset commits on completed checkpoints (read here)
    "register.consumer.metrics",
    "key.deserializer",
    "value.deserializer",
    "key.serializer",
    "value.serializer",
    "transaction.timeout.ms",
};

std::string upperCopy(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> splitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    std::string part = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.erase(part.begin());
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.pop_back();
    if (!part.empty()) out.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// "partition:0,offset:42;partition:1,offset:300" (Flink's KafkaConnectorOptionsUtil.parseSpecificOffsets).
std::map<int, int64_t> parseSpecificOffsets(const std::string& text, const std::string& key, const std::string& table) {
  auto bad = [&]() {
    return UserError(fmt::format("Invalid properties '{}' of table '{}' should follow the format "
                                 "'partition:0,offset:42;partition:1,offset:300', but is '{}'.",
                                 key, table, text));
  };
  std::map<int, int64_t> out;
  for (const std::string& pair : splitList(text, ';')) {
    std::vector<std::string> kv = splitList(pair, ',');
    if (kv.size() != 2 || kv[0].rfind("partition:", 0) != 0 || kv[1].rfind("offset:", 0) != 0) throw bad();
    int p = 0;
    int64_t o = 0;
    const std::string ps = kv[0].substr(10);
    const std::string os = kv[1].substr(7);
    auto r1 = std::from_chars(ps.data(), ps.data() + ps.size(), p);
    auto r2 = std::from_chars(os.data(), os.data() + os.size(), o);
    if (ps.empty() || os.empty() || r1.ec != std::errc() || r1.ptr != ps.data() + ps.size() ||
        r2.ec != std::errc() || r2.ptr != os.data() + os.size() || p < 0 || o < 0)
      throw bad();
    out[p] = o;
  }
  if (out.empty()) throw bad();
  return out;
}

int physicalIndex(const types::RowType& t, const std::string& name) {
  for (size_t i = 0; i < t.size(); ++i)
    if (t.names[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

types::RowType KafkaTableSpec::keyRowType() const {
  types::RowType t;
  for (int k : key_fields) {
    std::string name = physical.names[static_cast<size_t>(k)];
    if (!key_fields_prefix.empty() && name.rfind(key_fields_prefix, 0) == 0) name = name.substr(key_fields_prefix.size());
    t.names.push_back(name);
    t.types.push_back(physical.types[static_cast<size_t>(k)]);
  }
  return t;
}

types::RowType KafkaTableSpec::valueRowType() const {
  types::RowType t;
  for (int v : value_fields) {
    t.names.push_back(physical.names[static_cast<size_t>(v)]);
    t.types.push_back(physical.types[static_cast<size_t>(v)]);
  }
  return t;
}

types::RowType KafkaTableSpec::producedType(const std::vector<std::string>& metadata_names) const {
  types::RowType t = physical;
  for (size_t k = 0; k < metadata_types.size(); ++k) {
    t.names.push_back(k < metadata_names.size() ? metadata_names[k] : fmt::format("$metadata{}", k));
    t.types.push_back(metadata_types[k]);
  }
  return t;
}

std::string KafkaTableSpec::topicsText() const {
  if (!topic_pattern.empty()) return fmt::format("topic pattern '{}'", topic_pattern);
  std::string joined;
  for (const auto& t : topics) joined += (joined.empty() ? "" : ";") + t;
  return fmt::format("{} '{}'", topics.size() == 1 ? "topic" : "topics", joined);
}

std::map<std::string, types::LogicalType> readableKafkaMetadata() {
  return {{"topic", types::LogicalType::string(false)},
          {"partition", types::LogicalType::integer(false)},
          {"offset", types::LogicalType::bigint(false)},
          {"timestamp", types::LogicalType::timestampLtz(3, false)},
          {"timestamp-type", types::LogicalType::string(false)}};
}

std::set<std::string> kafkaOptionKeys(bool upsert) {
  std::set<std::string> keys = {"topic",
                                "properties.#",
                                "key.format",
                                "key.fields-prefix",
                                "value.format",
                                "value.fields-include",
                                "scan.parallelism",
                                "scan.bounded.mode",
                                "scan.bounded.timestamp-millis",
                                "scan.bounded.specific-offsets",
                                "sink.parallelism",
                                "sink.delivery-guarantee",
                                "sink.transactional-id-prefix"};
  if (upsert) {
    keys.insert({"sink.buffer-flush.max-rows", "sink.buffer-flush.interval"});
  } else {
    keys.insert({"topic-pattern", "format", "key.fields", "scan.startup.mode", "scan.startup.timestamp-millis",
                 "scan.startup.specific-offsets", "scan.topic-partition-discovery.interval", "sink.partitioner",
                 "sink.semantic"});
    for (const auto& k : kafkaFormatOptionKeys("")) keys.insert(k);
  }
  for (const auto& k : kafkaFormatOptionKeys("key.")) keys.insert(k);
  for (const auto& k : kafkaFormatOptionKeys("value.")) keys.insert(k);
  return keys;
}

KafkaTableSpec parseKafkaTable(const table::ResolvedTable& table, bool upsert, bool source) {
  const OptionMap& o = table.options;
  const std::string& name = table.name;
  const char* connector = upsert ? "upsert-kafka" : "kafka";
  KafkaTableSpec s;
  s.table_name = name;
  s.upsert = upsert;
  s.physical = table.physical_type;
  s.primary_key = table.primary_key;

  // Topics.
  auto topic = findOption(o, "topic");
  auto pattern = findOption(o, "topic-pattern");
  if (topic && pattern)
    throw UserError(fmt::format("Option 'topic' and 'topic-pattern' shouldn't be set together (table '{}').", name));
  if (!topic && !pattern)
    throw UserError(fmt::format("Either 'topic' or 'topic-pattern' must be set (table '{}').", name));
  if (topic) {
    s.topics = splitList(*topic, ';');
    if (s.topics.empty()) throw UserError(fmt::format("Option 'topic' of table '{}' names no topic.", name));
  } else {
    s.topic_pattern = *pattern;
    // Checked here so that a bad pattern fails planning, not the job (Flink compiles it in the factory).
    try {
      std::regex check(s.topic_pattern);
    } catch (const std::regex_error& e) {
      throw UserError(
          fmt::format("Invalid value '{}' for option 'topic-pattern' of table '{}': not a regular "
                      "expression ({}).",
                      s.topic_pattern, name, e.what()));
    }
  }
  if (!source && s.topics.size() != 1)
    throw UserError(fmt::format("The {} sink of table '{}' writes one topic: set 'topic' to a single topic, not '{}'.",
                                connector, name, topic ? *topic : *pattern));

  // Properties.
  auto bootstrap = findOption(o, "properties.bootstrap.servers");
  if (!bootstrap || bootstrap->empty())
    throw UserError(fmt::format("One or more required options are missing for table '{}'.\n\nMissing required "
                                "options are:\n\nproperties.bootstrap.servers",
                                name));
  s.bootstrap = *bootstrap;
  rd_kafka_conf_t* check = rd_kafka_conf_new();
  for (const auto& [key, value] : o) {
    if (key.rfind("properties.", 0) != 0) continue;
    const std::string prop = key.substr(11);
    if (kOwnProperties.count(prop) != 0) continue;
    char errstr[512];
    if (rd_kafka_conf_set(check, prop.c_str(), value.c_str(), errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(check);
      throw UserError(fmt::format("Invalid Kafka property '{}' = '{}' of table '{}': {}", key, value, name, errstr));
    }
    s.properties[prop] = value;
  }
  rd_kafka_conf_destroy(check);
  s.group_id = findOption(o, "properties.group.id");
  const int64_t timeout = longOption(o, "properties.default.api.timeout.ms", 60000, name);
  if (timeout <= 0 || timeout > 3600000)
    throw UserError(fmt::format("Invalid value '{}' for option 'properties.default.api.timeout.ms' of table '{}': "
                                "expected milliseconds between 1 and 3600000.",
                                timeout, name));
  s.timeout_ms = static_cast<int>(timeout);
  // Flink's KafkaSourceBuilder: a commit asked for explicitly needs the group.
  auto commitFlag = [&](const std::string& key, bool fallback) {
    auto v = findOption(o, key);
    if (!v) return fallback;
    if (*v != "true" && *v != "false")
      throw UserError(fmt::format("Invalid value '{}' for option '{}' of table '{}': expected 'true' or 'false'.", *v,
                                  key, name));
    if (*v == "true" && source && !s.group_id)
      throw UserError(fmt::format("Property group.id is required when offset commit is enabled (table '{}': set "
                                  "'properties.group.id' or drop '{}').",
                                  name, key));
    return *v == "true";
  };
  s.commit_offsets = commitFlag("properties.enable.auto.commit", false);
  s.commit_on_checkpoint = commitFlag("properties.commit.offsets.on.checkpoint", true);
  const int64_t interval = longOption(o, "properties.auto.commit.interval.ms", 5000, name);
  if (interval < 1 || interval > 86400000)
    throw UserError(
        fmt::format("Invalid value '{}' for option 'properties.auto.commit.interval.ms' of table '{}': "
                    "expected milliseconds between 1 and 86400000.",
                    interval, name));
  s.commit_interval_ms = static_cast<int>(interval);
  for (const char* key : {"properties.delivery.timeout.ms", "properties.message.timeout.ms"}) {
    if (!findOption(o, key)) continue;
    const int64_t ms = longOption(o, key, 0, name);
    if (ms < 1 || ms > 3600000)
      throw UserError(
          fmt::format("Invalid value '{}' for option '{}' of table '{}': expected milliseconds between "
                      "1 and 3600000.",
                      ms, key, name));
    s.delivery_timeout_ms = static_cast<int>(ms);  // message.timeout.ms wins when both are set (librdkafka)
  }
  if (auto reset = findOption(o, "properties.auto.offset.reset")) {
    std::string r = *reset;
    if (r == "smallest" || r == "beginning") r = "earliest";
    if (r == "largest" || r == "end") r = "latest";
    if (r != "earliest" && r != "latest" && r != "none")
      throw UserError(fmt::format("Invalid value '{}' for option 'properties.auto.offset.reset' of table '{}': "
                                  "expected 'earliest', 'latest' or 'none'.",
                                  *reset, name));
    s.auto_offset_reset = r;
  }

  // Formats and the key / value fields.
  auto format = findOption(o, "format");
  auto value_format = findOption(o, "value.format");
  if (format && value_format)
    throw UserError(fmt::format("Option 'format' and 'value.format' of table '{}' shouldn't be set together.", name));
  if (upsert && !findOption(o, "key.format"))
    throw UserError(fmt::format("One or more required options are missing for table '{}'.\n\nMissing required "
                                "options are:\n\nkey.format",
                                name));
  if (upsert && !value_format)
    throw UserError(fmt::format("One or more required options are missing for table '{}'.\n\nMissing required "
                                "options are:\n\nvalue.format",
                                name));
  s.value_format = format ? parseKafkaFormat(o, "format", "", name) : parseKafkaFormat(o, "value.format", "value.", name);
  if (findOption(o, "key.format")) s.key_format = parseKafkaFormat(o, "key.format", "key.", name);

  if (upsert) {
    if (table.primary_key.empty())
      throw UserError(fmt::format(
          "'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY specifies which columns "
          "should be read from or write to the Kafka message key. The PRIMARY KEY also defines records in the "
          "'upsert-kafka' table should update or delete on which keys. (table '{}')",
          name));
    if (s.value_format.isChangelog())
      throw UserError(fmt::format("'upsert-kafka' connector doesn't support '{}' as value format, because '{}' is not "
                                  "in insert-only mode (table '{}', option 'value.format').",
                                  s.value_format.name, s.value_format.name, name));
    s.key_fields = table.primary_key;
  } else if (auto key_fields = findOption(o, "key.fields")) {
    if (!s.key_format)
      throw UserError(fmt::format("The option 'key.fields' can only be declared if a key format is defined using "
                                  "'key.format' (table '{}').",
                                  name));
    for (const std::string& f : splitList(*key_fields, ';')) {
      const int idx = physicalIndex(s.physical, f);
      if (idx < 0)
        throw UserError(fmt::format("Could not find the field '{}' in the table schema for usage in the key format. "
                                    "A key field must be a regular, physical column (table '{}', option 'key.fields').",
                                    f, name));
      s.key_fields.push_back(idx);
    }
  } else if (s.key_format) {
    throw UserError(fmt::format("A key format 'key.format' requires the declaration of one or more of key fields "
                                "using 'key.fields' (table '{}').",
                                name));
  }
  if (s.key_format && s.key_format->isChangelog())
    throw UserError(fmt::format("The key format of table '{}' must be insert-only, not '{}' (option 'key.format').",
                                name, s.key_format->name));
  const std::string include = upperCopy(findOption(o, "value.fields-include").value_or("ALL"));
  if (include != "ALL" && include != "EXCEPT_KEY")
    throw UserError(fmt::format("Invalid value '{}' for option 'value.fields-include' of table '{}': expected 'ALL' "
                                "or 'EXCEPT_KEY'.",
                                *findOption(o, "value.fields-include"), name));
  s.key_fields_prefix = findOption(o, "key.fields-prefix").value_or("");
  if (!s.key_fields_prefix.empty()) {
    if (include == "ALL")
      throw UserError(fmt::format("A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. "
                                  "Set it to 'EXCEPT_KEY' instead to avoid field overlaps (table '{}').",
                                  name));
    for (int k : s.key_fields)
      if (s.physical.names[static_cast<size_t>(k)].rfind(s.key_fields_prefix, 0) != 0)
        throw UserError(fmt::format("All fields in 'key.fields' must be prefixed with '{}' when option "
                                    "'key.fields-prefix' is set but field '{}' is not prefixed (table '{}').",
                                    s.key_fields_prefix, s.physical.names[static_cast<size_t>(k)], name));
  }
  for (size_t i = 0; i < s.physical.size(); ++i) {
    const bool is_key = std::find(s.key_fields.begin(), s.key_fields.end(), static_cast<int>(i)) != s.key_fields.end();
    if (include == "ALL" || !is_key) s.value_fields.push_back(static_cast<int>(i));
  }
  if (s.value_fields.empty() && s.value_format.name != "raw")
    throw UserError(fmt::format("Table '{}' has no value columns: every physical column is a key column and "
                                "'value.fields-include' is 'EXCEPT_KEY'.",
                                name));
  // Fails planning on a column type the formats cannot read (source) or write (sink).
  auto checkFormat = [&](const KafkaFormat& format, const types::RowType& type, const char* key) {
    try {
      if (source) {
        FormatDecoder::create(format, type);
      } else {
        FormatEncoder::create(format, type);
      }
    } catch (const UserError& e) {
      throw UserError(fmt::format("{} (table '{}', option '{}')", e.what(), name, key));
    }
  };
  if (s.key_format) checkFormat(*s.key_format, s.keyRowType(), "key.format");
  checkFormat(s.value_format, s.valueRowType(), format ? "format" : "value.format");

  // Startup and bounded modes.
  if (!upsert) {
    const std::string mode = findOption(o, "scan.startup.mode").value_or("group-offsets");
    if (mode == "earliest-offset") {
      s.startup = StartupMode::kEarliestOffset;
    } else if (mode == "latest-offset") {
      s.startup = StartupMode::kLatestOffset;
    } else if (mode == "group-offsets") {
      s.startup = StartupMode::kGroupOffsets;
    } else if (mode == "timestamp") {
      s.startup = StartupMode::kTimestamp;
      if (!findOption(o, "scan.startup.timestamp-millis"))
        throw UserError(fmt::format("'scan.startup.timestamp-millis' is required in 'timestamp' startup mode but "
                                    "missing (table '{}').",
                                    name));
      s.startup_timestamp = longOption(o, "scan.startup.timestamp-millis", 0, name);
    } else if (mode == "specific-offsets") {
      s.startup = StartupMode::kSpecificOffsets;
      auto offsets = findOption(o, "scan.startup.specific-offsets");
      if (!offsets)
        throw UserError(fmt::format("'scan.startup.specific-offsets' is required in 'specific-offsets' startup mode "
                                    "but missing (table '{}').",
                                    name));
      s.startup_offsets = parseSpecificOffsets(*offsets, "scan.startup.specific-offsets", name);
    } else {
      throw UserError(fmt::format("Invalid value '{}' for option 'scan.startup.mode' of table '{}': expected one of "
                                  "earliest-offset, latest-offset, group-offsets, timestamp, specific-offsets.",
                                  mode, name));
    }
    if (s.startup == StartupMode::kGroupOffsets && source && !s.group_id)
      throw UserError(fmt::format("'properties.group.id' is required in 'group-offsets' startup mode (the default "
                                  "'scan.startup.mode') but missing (table '{}').",
                                  name));
  } else {
    s.startup = StartupMode::kEarliestOffset;  // upsert-kafka always reads the whole topic
  }
  const std::string bmode = findOption(o, "scan.bounded.mode").value_or("unbounded");
  if (bmode == "unbounded") {
    s.bounded = BoundedMode::kUnbounded;
  } else if (bmode == "latest-offset") {
    s.bounded = BoundedMode::kLatestOffset;
  } else if (bmode == "group-offsets") {
    s.bounded = BoundedMode::kGroupOffsets;
    if (source && !s.group_id)
      throw UserError(fmt::format("'properties.group.id' is required in 'group-offsets' bounded mode but missing "
                                  "(table '{}').",
                                  name));
  } else if (bmode == "timestamp") {
    s.bounded = BoundedMode::kTimestamp;
    if (!findOption(o, "scan.bounded.timestamp-millis"))
      throw UserError(fmt::format("'scan.bounded.timestamp-millis' is required in 'timestamp' bounded mode but "
                                  "missing (table '{}').",
                                  name));
    s.bounded_timestamp = longOption(o, "scan.bounded.timestamp-millis", 0, name);
  } else if (bmode == "specific-offsets") {
    s.bounded = BoundedMode::kSpecificOffsets;
    auto offsets = findOption(o, "scan.bounded.specific-offsets");
    if (!offsets)
      throw UserError(fmt::format("'scan.bounded.specific-offsets' is required in 'specific-offsets' bounded mode "
                                  "but missing (table '{}').",
                                  name));
    s.bounded_offsets = parseSpecificOffsets(*offsets, "scan.bounded.specific-offsets", name);
  } else {
    throw UserError(fmt::format("Invalid value '{}' for option 'scan.bounded.mode' of table '{}': expected one of "
                                "unbounded, latest-offset, group-offsets, timestamp, specific-offsets.",
                                bmode, name));
  }
  if ((s.startup == StartupMode::kSpecificOffsets || s.bounded == BoundedMode::kSpecificOffsets) &&
      s.topics.size() != 1)
    throw UserError(fmt::format("Currently Kafka source only supports specific offset for single topic (table '{}').",
                                name));

  // Sink.
  const std::string partitioner = findOption(o, "sink.partitioner").value_or("default");
  if (partitioner == "default") {
    s.partitioner = SinkPartitioner::kDefault;
  } else if (partitioner == "fixed") {
    s.partitioner = SinkPartitioner::kFixed;
  } else if (partitioner == "round-robin") {
    s.partitioner = SinkPartitioner::kRoundRobin;
  } else {
    throw UserError(fmt::format("Invalid value '{}' for option 'sink.partitioner' of table '{}': expected 'default', "
                                "'fixed' or 'round-robin' (custom partitioner classes do not exist here).",
                                partitioner, name));
  }
  // Flink's KafkaConnectorOptions: DELIVERY_GUARANTEE defaults to AT_LEAST_ONCE.
  s.delivery_guarantee = findOption(o, "sink.delivery-guarantee").value_or("at-least-once");
  if (s.delivery_guarantee != "at-least-once" && s.delivery_guarantee != "none" &&
      s.delivery_guarantee != "exactly-once")
    throw ConfigError(fmt::format("Invalid value '{}' for option 'sink.delivery-guarantee' of table '{}': expected "
                                  "'at-least-once', 'exactly-once' or 'none'.",
                                  s.delivery_guarantee, name));
  s.transactional_id_prefix = findOption(o, "sink.transactional-id-prefix").value_or("");
  if (s.delivery_guarantee == "exactly-once" && !source) {
    // Flink's KafkaConnectorOptionsUtil.validateDeliveryGuarantee.
    if (s.transactional_id_prefix.empty())
      throw ConfigError(fmt::format("'sink.transactional-id-prefix' must be specified when using "
                                    "DeliveryGuarantee.EXACTLY_ONCE (table '{}').",
                                    name));
    throw ConfigError(fmt::format(
        "'sink.delivery-guarantee' = 'exactly-once' of table '{}' is not supported: Flink's KafkaSink commits a "
        "transaction after its checkpoint completes, and after a crash between the two it resumes the prepared "
        "transaction of its transactional.id (prefix '{}') and commits it; librdkafka cannot resume a "
        "transaction (initializing the same transactional.id aborts it), so that checkpoint's records would be "
        "lost. Use 'at-least-once' (with upsert-kafka and a primary key the materialized result is exact, "
        "because upserts are idempotent).",
        name, s.transactional_id_prefix));
  }
  return s;
}

}  // namespace sluice::connectors::kafka

// The kafka sink and the upsert-kafka source and sink against the in-process mock cluster. Expected
// values come from the rows the tests write, never from the engine.

#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "connectors/kafka/kafka_spec.h"
#include "kafka_test_util.h"

namespace sluice::connectors::kafka {
namespace {

using testing::materialize;
using testing::runSql;

class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    static int n = 0;
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("sluice_kafka_test_{}_{}", ::getpid(), n++);
    std::ofstream(path_) << content;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

std::string kafkaTable(const std::string& name, const std::string& columns, const MockKafkaCluster& c,
                       const std::string& topic, const std::string& extra) {
  return fmt::format("CREATE TABLE {} ({}) WITH ('connector' = 'kafka', 'topic' = '{}', "
                     "'properties.bootstrap.servers' = '{}'{});\n",
                     name, columns, topic, c.bootstrapServers(), extra);
}

TEST(KafkaSinkTest, InsertThenSelectRoundTrip) {
  MockKafkaCluster c(1);
  c.createTopic("orders", 3);
  std::string csv;
  std::vector<std::string> want;
  for (int i = 0; i < 40; ++i) {
    csv += fmt::format("{},item{},{}\n", i, i % 7, i * 3);
    want.push_back(fmt::format("+I[{}, item{}, {}]", i, i % 7, i * 3));
  }
  TempFile input(csv);
  const std::string ddl =
      fmt::format("CREATE TABLE src (id INT, name STRING, qty INT) WITH ('connector' = 'filesystem', 'path' = '{}', "
                  "'format' = 'csv');\n",
                  input.path()) +
      kafkaTable("k", "id INT, name STRING, qty INT", c, "orders",
                 ", 'format' = 'json', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'");
  runSql(ddl + "INSERT INTO k SELECT * FROM src;", 2);
  std::vector<KafkaRecord> records = c.readAll("orders");
  ASSERT_EQ(records.size(), 40u);
  std::set<std::string> values;
  for (const auto& r : records) {
    EXPECT_FALSE(r.key.has_value());
    values.insert(r.value.value_or("null"));
  }
  EXPECT_EQ(values.count(R"({"id":5,"name":"item5","qty":15})"), 1u);
  auto lines = runSql(ddl + "SELECT * FROM k;", 2);
  std::sort(lines.begin(), lines.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(lines, want);
}

TEST(KafkaSinkTest, KeyFormatAndPartitioners) {
  MockKafkaCluster c(1);
  std::string csv;
  for (int i = 0; i < 8; ++i) csv += fmt::format("{},k{}\n", i, i % 3);
  TempFile input(csv);
  const std::string src = fmt::format(
      "CREATE TABLE src (id INT, k STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
      input.path());
  // default: murmur2 of the key, so one key always lands in one partition; the key is the raw 'k' bytes.
  c.createTopic("by_key", 4);
  runSql(src + kafkaTable("o", "id INT, k STRING", c, "by_key",
                          ", 'key.format' = 'raw', 'key.fields' = 'k', 'value.format' = 'csv', "
                          "'value.fields-include' = 'EXCEPT_KEY'") +
         "INSERT INTO o SELECT * FROM src;");
  std::map<std::string, std::set<int>> partitions_of_key;
  int rows = 0;
  for (const auto& r : c.readAll("by_key")) {
    ++rows;
    ASSERT_TRUE(r.key && r.value);
    // value = id, key = "k<id % 3>"
    EXPECT_EQ(*r.key, "k" + std::to_string(std::stoi(*r.value) % 3));
    partitions_of_key[*r.key].insert(r.partition);
  }
  EXPECT_EQ(rows, 8);
  for (const auto& [k, ps] : partitions_of_key) EXPECT_EQ(ps.size(), 1u) << k;
  // round-robin from one subtask: 8 records over 4 partitions, two each.
  c.createTopic("rr", 4);
  runSql(src + kafkaTable("o", "id INT, k STRING", c, "rr", ", 'format' = 'csv', 'sink.partitioner' = 'round-robin'") +
         "INSERT INTO o SELECT * FROM src;");
  std::map<int, int> per_partition;
  for (const auto& r : c.readAll("rr")) ++per_partition[r.partition];
  EXPECT_EQ(per_partition, (std::map<int, int>{{0, 2}, {1, 2}, {2, 2}, {3, 2}}));
  // fixed: sink subtask i writes partition i, so two sink subtasks use partitions 0 and 1 only.
  c.createTopic("fixed", 4);
  runSql(src + kafkaTable("o", "id INT, k STRING", c, "fixed",
                          ", 'format' = 'csv', 'sink.partitioner' = 'fixed', 'sink.parallelism' = '2'") +
             "INSERT INTO o SELECT * FROM src;",
         2);
  int fixed_rows = 0;
  for (const auto& r : c.readAll("fixed")) {
    ++fixed_rows;
    EXPECT_LT(r.partition, 2);
  }
  EXPECT_EQ(fixed_rows, 8);
}

TEST(KafkaSinkTest, UpdatingInputIsRejectedAtPlanning) {
  MockKafkaCluster c(1);
  TempFile input("1,a\n");
  try {
    runSql(fmt::format("CREATE TABLE src (id INT, k STRING) WITH ('connector' = 'filesystem', 'path' = '{}', "
                       "'format' = 'csv');\n",
                       input.path()) +
           kafkaTable("o", "k STRING, n BIGINT", c, "t", ", 'format' = 'json'") +
           "INSERT INTO o SELECT k, COUNT(*) FROM src GROUP BY k;");
    FAIL() << "expected a planning error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("doesn't support consuming update changes"), std::string::npos) << e.what();
  }
}

TEST(KafkaSinkTest, UndeliverableRecordsFailTheJobNamingTheTopic) {
  TempFile input("1,a\n2,b\n");
  // Both names of the delivery timeout are honoured (librdkafka's message.timeout.ms and the Kafka
  // producer's delivery.timeout.ms), with each partitioner; the job ends with the error, no hang.
  for (const std::string extra : {"'properties.message.timeout.ms' = '500'", "'properties.delivery.timeout.ms' = '600'",
                                  "'properties.delivery.timeout.ms' = '700', 'sink.partitioner' = 'fixed'",
                                  "'properties.delivery.timeout.ms' = '800', 'sink.partitioner' = 'round-robin'"}) {
    try {
      runSql(fmt::format("CREATE TABLE src (id INT, k STRING) WITH ('connector' = 'filesystem', 'path' = '{}', "
                         "'format' = 'csv');\n",
                         input.path()) +
             "CREATE TABLE o (id INT, k STRING) WITH ('connector' = 'kafka', 'topic' = 'out', "
             "'properties.bootstrap.servers' = '127.0.0.1:1', " +
             extra +
             ", 'format' = 'csv');\n"
             "INSERT INTO o SELECT * FROM src;");
      ADD_FAILURE() << "expected a delivery error with " << extra;
    } catch (const TransientError& e) {  // brokers out of reach: worth a restart
      const std::string what = e.what();
      EXPECT_NE(what.find("Kafka topic 'out'"), std::string::npos) << what;
      EXPECT_NE(what.find("'127.0.0.1:1'"), std::string::npos) << what;
      EXPECT_EQ(what.find("partition -1"), std::string::npos) << what;
      // The timeout the job waited, as configured (fixed / round-robin wait for the partitions first).
      const std::string ms = extra.substr(extra.find("= '") + 3, 3);
      EXPECT_NE(what.find("within " + ms + " ms"), std::string::npos) << what;
    }
  }
}

TEST(KafkaSinkTest, TopicTheBrokersRefuseFailsNamingIt) {
  MockKafkaCluster c(1);
  c.createTopic("gone", 2);
  c.markTopicDeleted("gone");  // every request about it answers UNKNOWN_TOPIC_OR_PARTITION, none creates it
  TempFile input("1,a\n");
  for (const std::string partitioner : {"default", "fixed", "round-robin"}) {
    try {
      runSql(fmt::format("CREATE TABLE src (id INT, k STRING) WITH ('connector' = 'filesystem', 'path' = '{}', "
                         "'format' = 'csv');\n",
                         input.path()) +
             kafkaTable("o", "id INT, k STRING", c, "gone",
                        ", 'format' = 'csv', 'properties.delivery.timeout.ms' = '500', 'sink.partitioner' = '" +
                            partitioner + "'") +
             "INSERT INTO o SELECT * FROM src;");
      ADD_FAILURE() << "expected an error with " << partitioner;
    } catch (const SluiceError& e) {  // default: records time out (transient, as the Java producer's); else UserError
      const std::string what = e.what();
      EXPECT_NE(what.find("Kafka topic 'gone'"), std::string::npos) << what;
      EXPECT_NE(what.find(c.bootstrapServers()), std::string::npos) << what;
      if (partitioner != "default") {
        EXPECT_NE(what.find("does not exist"), std::string::npos) << what;
      }
    }
  }
}

TEST(KafkaSinkTest, DeliveryTimeoutDefaultsToTheKafkaProducers) {
  table::ResolvedTable t;
  t.name = "o";
  t.physical_type = types::RowType{{"v"}, {types::LogicalType::string()}};
  t.options = {{"connector", "kafka"}, {"topic", "out"}, {"properties.bootstrap.servers", "x:1"}, {"format", "raw"}};
  // Kafka's producer config: delivery.timeout.ms defaults to 120000 (librdkafka's own default is 300000).
  EXPECT_EQ(parseKafkaTable(t, false, false).delivery_timeout_ms, 120000);
  t.options["properties.delivery.timeout.ms"] = "2500";
  EXPECT_EQ(parseKafkaTable(t, false, false).delivery_timeout_ms, 2500);
  t.options["properties.message.timeout.ms"] = "3500";  // librdkafka's alias, which wins as in librdkafka
  EXPECT_EQ(parseKafkaTable(t, false, false).delivery_timeout_ms, 3500);
  t.options["properties.message.timeout.ms"] = "0";
  EXPECT_THROW(parseKafkaTable(t, false, false), UserError);
}

TEST(KafkaSinkTest, FixedAndRoundRobinCreateAMissingTopicAsTheDefaultPartitionerDoes) {
  MockKafkaCluster c(1);
  std::string csv;
  for (int i = 0; i < 12; ++i) csv += fmt::format("{},k{}\n", i, i);
  TempFile input(csv);
  const std::string src = fmt::format(
      "CREATE TABLE src (id INT, k STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
      input.path());
  for (const std::string partitioner : {"default", "fixed", "round-robin"}) {
    const std::string topic = "new_" + partitioner;  // not created: the brokers auto-create it
    runSql(src +
           kafkaTable("o", "id INT, k STRING", c, topic,
                      ", 'format' = 'csv', 'sink.partitioner' = '" + partitioner + "'") +
           "INSERT INTO o SELECT * FROM src;");
    std::vector<KafkaRecord> records = c.readAll(topic);
    std::set<std::string> values;
    std::map<int, int> per_partition;
    for (const auto& r : records) {
      values.insert(r.value.value_or("null"));
      ++per_partition[r.partition];
    }
    std::set<std::string> want;
    for (int i = 0; i < 12; ++i) want.insert(fmt::format("{},k{}", i, i));
    EXPECT_EQ(records.size(), 12u) << partitioner;
    EXPECT_EQ(values, want) << partitioner;
    if (partitioner == "round-robin") {
      // One subtask deals the 12 records over the partitions the auto-created topic got.
      const int n = c.numPartitions(topic);
      for (int p = 0; p < n; ++p) EXPECT_EQ(per_partition[p], 12 / n + (p < 12 % n ? 1 : 0)) << p;
    }
    if (partitioner == "fixed") {
      EXPECT_EQ(per_partition.size(), 1u);  // subtask 0 writes partition 0 % n
      EXPECT_EQ(per_partition.count(0), 1u);
    }
  }
}

constexpr int kKeys = 30;
constexpr int kSteps = 20;
bool deletedAtEnd(int id) { return id % 5 == 0; }

// upsert-kafka topic "latest" (3 partitions by key): key {"id":i}; step s (1..20) writes value
// {"id":i,"v":s}; keys with id % 5 == 0 end with a tombstone. Steps of the keys interleave.
void produceUpserts(MockKafkaCluster& c) {
  c.createTopic("latest", 3);
  std::vector<KafkaRecord> records;
  for (int s = 1; s <= kSteps; ++s)
    for (int id = 0; id < kKeys; ++id) {
      KafkaRecord r;
      r.key = fmt::format(R"({{"id":{}}})", id);
      r.value = fmt::format(R"({{"id":{},"v":{}}})", id, s);
      records.push_back(r);
    }
  for (int id = 0; id < kKeys; ++id)
    if (deletedAtEnd(id)) {
      KafkaRecord r;
      r.key = fmt::format(R"({{"id":{}}})", id);
      records.push_back(r);
    }
  c.produce("latest", records);
}

std::string upsertTable(const MockKafkaCluster& c, const std::string& extra) {
  return fmt::format("CREATE TABLE u (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
                     "'upsert-kafka', 'topic' = 'latest', 'properties.bootstrap.servers' = '{}', 'key.format' = "
                     "'json', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset'{});\n",
                     c.bootstrapServers(), extra);
}

TEST(UpsertKafkaTest, ManyUpdatesPerKeyGiveTheLastValuePerKeyInOrder) {
  MockKafkaCluster c(1);
  produceUpserts(c);
  // Per key: +I[id, 1], then -U[id, s-1] +U[id, s], then -D[id, 20] for deleted keys (ChangelogNormalize).
  std::map<int, std::vector<std::string>> want;
  for (int id = 0; id < kKeys; ++id) {
    want[id].push_back(fmt::format("+I[{}, 1]", id));
    for (int s = 2; s <= kSteps; ++s) {
      want[id].push_back(fmt::format("-U[{}, {}]", id, s - 1));
      want[id].push_back(fmt::format("+U[{}, {}]", id, s));
    }
    if (deletedAtEnd(id)) want[id].push_back(fmt::format("-D[{}, {}]", id, kSteps));
  }
  std::multiset<std::string> final_rows;
  for (int id = 0; id < kKeys; ++id)
    if (!deletedAtEnd(id)) final_rows.insert(fmt::format("[{}, {}]", id, kSteps));
  for (auto [scan_p, p] : std::vector<std::pair<int, int>>{{3, 2}, {1, 1}}) {
    auto lines = runSql(upsertTable(c, fmt::format(", 'scan.parallelism' = '{}'", scan_p)) + "SELECT * FROM u;", p);
    std::map<int, std::vector<std::string>> per_key;
    for (const auto& line : lines) per_key[std::stoi(line.substr(3))].push_back(line);
    EXPECT_EQ(per_key, want) << "scan.parallelism " << scan_p << ", parallelism " << p;
    EXPECT_EQ(materialize(lines), final_rows);
  }
}

TEST(UpsertKafkaTest, SinkWritesValuesAndTombstones) {
  MockKafkaCluster c(1);
  c.createTopic("counts", 2);
  // A debezium-json changelog: key 1 inserted then updated, key 2 inserted then deleted, key 3 inserted.
  TempFile cdc(R"({"before":null,"after":{"id":1,"v":10},"op":"c"}
{"before":null,"after":{"id":2,"v":20},"op":"c"}
{"before":{"id":1,"v":10},"after":{"id":1,"v":11},"op":"u"}
{"before":{"id":2,"v":20},"after":null,"op":"d"}
{"before":null,"after":{"id":3,"v":30},"op":"c"}
)");
  std::vector<table::JobSummary> jobs;
  runSql(fmt::format("CREATE TABLE src (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
                     "'filesystem', 'path' = '{}', 'format' = 'debezium-json');\n"
                     "CREATE TABLE dst (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
                     "'upsert-kafka', 'topic' = 'counts', 'properties.bootstrap.servers' = '{}', 'key.format' = "
                     "'json', 'value.format' = 'json');\nINSERT INTO dst SELECT * FROM src;",
                     cdc.path(), c.bootstrapServers()),
         1, &jobs);
  // The changelog is +I1 +I2 -U1 +U1 -D2 +I3: the sink takes the 5 rows it writes; the -U is not
  // counted as written (Flink drops it before the sink, so its numRecordsIn never sees it).
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].rows_written, 5);
  // Per key, in order: key 1: value 10, value 11 (the -U is dropped); key 2: value 20, tombstone; key 3: 30.
  std::map<std::string, std::vector<std::string>> per_key;
  for (const auto& r : c.readAll("counts")) per_key[r.key.value_or("?")].push_back(r.value.value_or("TOMBSTONE"));
  EXPECT_EQ(per_key, (std::map<std::string, std::vector<std::string>>{
                         {R"({"id":1})", {R"({"id":1,"v":10})", R"({"id":1,"v":11})"}},
                         {R"({"id":2})", {R"({"id":2,"v":20})", "TOMBSTONE"}},
                         {R"({"id":3})", {R"({"id":3,"v":30})"}}}));
  // Read back through upsert-kafka: the last value per key, key 2 deleted.
  auto lines = runSql(fmt::format("CREATE TABLE u (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
                                  "'upsert-kafka', 'topic' = 'counts', 'properties.bootstrap.servers' = '{}', "
                                  "'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = "
                                  "'latest-offset');\nSELECT * FROM u;",
                                  c.bootstrapServers()));
  EXPECT_EQ(materialize(lines), (std::multiset<std::string>{"[1, 11]", "[3, 30]"}));
}

TEST(UpsertKafkaTest, PrimaryKeyIsRequired) {
  try {
    runSql("CREATE TABLE u (id INT, v INT) WITH ('connector' = 'upsert-kafka', 'topic' = 't', "
           "'properties.bootstrap.servers' = 'x:1', 'key.format' = 'json', 'value.format' = 'json');\n"
           "SELECT * FROM u;");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'upsert-kafka' tables require to define a PRIMARY KEY constraint"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice::connectors::kafka

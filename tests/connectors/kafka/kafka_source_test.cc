// The kafka source against the in-process mock cluster: startup and bounded modes, metadata columns,
// formats, FLIP-27 split assignment, and its errors. Every expected value is derived from the records
// the test produces.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "connectors/kafka/kafka_source.h"
#include "kafka_test_util.h"

namespace sluice::connectors::kafka {
namespace {

using testing::runSql;
using testing::valueRecord;

// A bounded kafka table over `topic` with columns (id INT, name STRING) in csv, plus extra options.
std::string csvTable(const MockKafkaCluster& c, const std::string& topic, const std::string& extra) {
  return fmt::format(
      "CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = '{}', "
      "'properties.bootstrap.servers' = '{}', 'format' = 'csv', 'scan.bounded.mode' = 'latest-offset'{});\n",
      topic, c.bootstrapServers(), extra);
}

// Ten records "i,n<i>" in partition 0 with timestamps 1000 + i.
void produceTen(MockKafkaCluster& c, const std::string& topic) {
  c.createTopic(topic, 1);
  std::vector<KafkaRecord> records;
  for (int i = 0; i < 10; ++i) records.push_back(valueRecord(fmt::format("{},n{}", i, i), 0, 1000 + i));
  c.produce(topic, records);
}

std::vector<std::string> idsFrom(int from, int to) {  // "+I[i, ni]" for i in [from, to)
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(fmt::format("+I[{}, n{}]", i, i));
  return out;
}

TEST(KafkaSourceTest, StartupModes) {
  MockKafkaCluster c(1);
  produceTen(c, "ten");
  auto run = [&](const std::string& extra) {
    auto lines = runSql(csvTable(c, "ten", extra) + "SELECT * FROM t;");
    return lines;
  };
  EXPECT_EQ(run(", 'scan.startup.mode' = 'earliest-offset'"), idsFrom(0, 10));
  EXPECT_EQ(run(", 'scan.startup.mode' = 'latest-offset'"), idsFrom(0, 0));
  EXPECT_EQ(run(", 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:4'"),
            idsFrom(4, 10));
  // The mock cannot look offsets up by time: the reader skips to the first record at or after it.
  EXPECT_EQ(run(", 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '1006'"), idsFrom(6, 10));
  c.commitOffsets("g1", "ten", {{0, 7}});
  EXPECT_EQ(run(", 'properties.group.id' = 'g1'"), idsFrom(7, 10));  // group-offsets is the default
  // A group without a committed offset: Flink's 'none' reset fails, 'earliest' reads everything.
  EXPECT_THROW(run(", 'properties.group.id' = 'g2'"), UserError);
  EXPECT_EQ(run(", 'properties.group.id' = 'g2', 'properties.auto.offset.reset' = 'earliest'"), idsFrom(0, 10));
}

TEST(KafkaSourceTest, SpecificOffsetOutOfRangeStartsAtTheEarliestAsFlinksResetStrategy) {
  MockKafkaCluster c(1);
  produceTen(c, "ten");  // offsets 0..9, so the log end is 10
  auto run = [&](const std::string& offsets) {
    return runSql(
        csvTable(c, "ten",
                 ", 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = '" + offsets + "'") +
        "SELECT * FROM t;");
  };
  // Flink's OffsetsInitializer.offsets() resets to EARLIEST when the offset is out of range.
  EXPECT_EQ(run("partition:0,offset:25"), idsFrom(0, 10));
  EXPECT_EQ(run("partition:0,offset:11"), idsFrom(0, 10));
  // The log end itself is in range: nothing left to read before the bounded end.
  EXPECT_EQ(run("partition:0,offset:10"), idsFrom(0, 0));
  EXPECT_EQ(run("partition:0,offset:9"), idsFrom(9, 10));
}

TEST(KafkaSourceTest, AutoCommitLetsTheNextJobOfTheGroupResume) {
  MockKafkaCluster c(1);
  c.createTopic("resume", 2);
  // Record i ("i,n<i>") goes to partition i % 2 at offset i / 2.
  auto produce = [&](int from, int to) {
    std::vector<KafkaRecord> records;
    for (int i = from; i < to; ++i) records.push_back(valueRecord(fmt::format("{},n{}", i, i), i % 2));
    c.produce("resume", records);
  };
  produce(0, 10);
  // The ids with from <= offset < to in every partition.
  auto ids = [](int total, std::map<int, int> from, std::map<int, int> to) {
    std::vector<std::string> out;
    for (int i = 0; i < total; ++i)
      if (i / 2 >= from[i % 2] && i / 2 < to[i % 2]) out.push_back(fmt::format("+I[{}, n{}]", i, i));
    return out;
  };
  auto run = [&](const std::string& extra) {
    auto lines = runSql(fmt::format("CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = "
                                    "'resume', 'properties.bootstrap.servers' = '{}', 'format' = 'csv', "
                                    "'properties.group.id' = 'g', 'properties.auto.offset.reset' = 'earliest', "
                                    "'scan.parallelism' = '2'{});\nSELECT * FROM t;",
                                    c.bootstrapServers(), extra),
                        2);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const std::string commit = ", 'properties.enable.auto.commit' = 'true'";
  const std::string to_latest = ", 'scan.bounded.mode' = 'latest-offset'";
  // Job 1 commits where it stops: partition 0 at 2, partition 1 at 3.
  EXPECT_EQ(run(commit + ", 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = "
                         "'partition:0,offset:2;partition:1,offset:3'"),
            sorted(ids(10, {{0, 0}, {1, 0}}, {{0, 2}, {1, 3}})));
  // Job 2 resumes there but commits nothing (auto commit off, Flink's default).
  EXPECT_EQ(run(to_latest), sorted(ids(10, {{0, 2}, {1, 3}}, {{0, 5}, {1, 5}})));
  // So job 3 reads the same again, and commits the end.
  EXPECT_EQ(run(commit + to_latest), sorted(ids(10, {{0, 2}, {1, 3}}, {{0, 5}, {1, 5}})));
  // Job 4 reads only what arrived since.
  produce(10, 16);
  EXPECT_EQ(run(commit + to_latest), sorted(ids(16, {{0, 5}, {1, 5}}, {{0, 8}, {1, 8}})));
  // The group's offsets as any Kafka client sees them: the end of both partitions.
  EXPECT_EQ(c.committedOffsets("g", "resume"), (std::map<int, int64_t>{{0, 8}, {1, 8}}));
}

TEST(KafkaSourceTest, BoundedModes) {
  MockKafkaCluster c(1);
  produceTen(c, "ten");
  auto run = [&](const std::string& bounded) {
    return runSql(fmt::format("CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'ten', "
                              "'properties.bootstrap.servers' = '{}', 'format' = 'csv', "
                              "'scan.startup.mode' = 'earliest-offset'{});\nSELECT * FROM t;",
                              c.bootstrapServers(), bounded));
  };
  EXPECT_EQ(run(", 'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = 'partition:0,offset:3'"),
            idsFrom(0, 3));
  EXPECT_EQ(run(", 'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '1005'"), idsFrom(0, 5));
  c.commitOffsets("g", "ten", {{0, 8}});
  EXPECT_EQ(run(", 'scan.bounded.mode' = 'group-offsets', 'properties.group.id' = 'g'"), idsFrom(0, 8));
  // latest-offset ends at the end the topic had when the job started.
  EXPECT_EQ(run(", 'scan.bounded.mode' = 'latest-offset'"), idsFrom(0, 10));
}

TEST(KafkaSourceTest, PartitionsAreSplitsAssignedAsFlinksEnumerator) {
  // Flink's KafkaSourceEnumerator.getSplitOwner: start = ((hash * 31) & 0x7FFFFFFF) % p, owner = (start + i) % p.
  // "orders".hashCode() = -1008770331 (Java); times 31 in 32-bit arithmetic, & 0x7FFFFFFF = 940374459.
  EXPECT_EQ(kafkaSplitOwner("orders", 0, 3), 940374459 % 3);
  EXPECT_EQ(kafkaSplitOwner("orders", 1, 3), (940374459 % 3 + 1) % 3);
  EXPECT_EQ(kafkaSplitOwner("orders", 5, 2), (940374459 % 2 + 5) % 2);

  MockKafkaCluster c(3);
  c.createTopic("orders", 5);
  std::vector<KafkaRecord> records;
  for (int i = 0; i < 50; ++i) records.push_back(valueRecord(fmt::format("{},n{}", i, i), i % 5));
  c.produce("orders", records);
  // Every record once, whatever the source parallelism.
  for (int p : {1, 2, 3, 7}) {
    auto lines = runSql(csvTable(c, "orders", fmt::format(", 'scan.startup.mode' = 'earliest-offset', "
                                                          "'scan.parallelism' = '{}'", p)) +
                            "SELECT * FROM t;",
                        2);
    std::sort(lines.begin(), lines.end());
    std::vector<std::string> want = idsFrom(0, 50);
    std::sort(want.begin(), want.end());
    EXPECT_EQ(lines, want) << "scan.parallelism " << p;
  }
}

TEST(KafkaSourceTest, MetadataColumns) {
  MockKafkaCluster c(1);
  c.createTopic("m", 2);
  // Partition p, offset o: value "<p*10+o>", timestamp 5000 + 100 p + o.
  std::vector<KafkaRecord> records;
  for (int p = 0; p < 2; ++p)
    for (int o = 0; o < 3; ++o) records.push_back(valueRecord(std::to_string(p * 10 + o), p, 5000 + 100 * p + o));
  c.produce("m", records);
  // Flink's type of 'timestamp' is TIMESTAMP_LTZ(3), printed as the UTC instant; a TIMESTAMP(3) column
  // holds the instant's UTC wall clock.
  for (const bool ltz : {true, false}) {
    auto lines = runSql(fmt::format(
        "CREATE TABLE t (v INT, part INT METADATA FROM 'partition' VIRTUAL, `offset` BIGINT METADATA VIRTUAL, "
        "ts {} METADATA FROM 'timestamp', tp STRING METADATA FROM 'topic' VIRTUAL) WITH ("
        "'connector' = 'kafka', 'topic' = 'm', 'properties.bootstrap.servers' = '{}', 'format' = 'csv', "
        "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');\n"
        "SELECT v, part, `offset`, ts, tp, v - 10 * part - `offset` AS zero FROM t;",
        ltz ? "TIMESTAMP_LTZ(3)" : "TIMESTAMP(3)", c.bootstrapServers()));
    std::sort(lines.begin(), lines.end());
    std::vector<std::string> want;
    for (int p = 0; p < 2; ++p)
      for (int o = 0; o < 3; ++o) {
        // 5000 + 100 p + o ms after the epoch: a TIMESTAMP prints no fraction when whole, an instant
        // always has its seconds and a 'Z'.
        const std::string frac = p == 0 && o == 0 ? "" : fmt::format(".{}{:02d}", p, o);
        want.push_back(fmt::format("+I[{}, {}, {}, 1970-01-01T00:00:05{}{}, m, 0]", p * 10 + o, p, o, frac,
                                   ltz ? "Z" : ""));
      }
    std::sort(want.begin(), want.end());
    EXPECT_EQ(lines, want) << (ltz ? "TIMESTAMP_LTZ(3)" : "TIMESTAMP(3)");
  }
}

TEST(KafkaSourceTest, UnknownMetadataKeyAndBadTypeAreErrors) {
  MockKafkaCluster c(1);
  auto plan = [&](const std::string& col) {
    runSql(fmt::format("CREATE TABLE t (v INT, {}) WITH ('connector' = 'kafka', 'topic' = 'x', "
                       "'properties.bootstrap.servers' = '{}', 'format' = 'csv', 'scan.startup.mode' = "
                       "'earliest-offset', 'scan.bounded.mode' = 'latest-offset');\nSELECT * FROM t;",
                       col, c.bootstrapServers()));
  };
  try {
    plan("h STRING METADATA FROM 'header' VIRTUAL");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Invalid metadata key 'header'"), std::string::npos) << e.what();
  }
  try {
    plan("o INT METADATA FROM 'offset' VIRTUAL");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'o'"), std::string::npos) << e.what();
  }
}

TEST(KafkaSourceTest, KeyAndValueFormats) {
  MockKafkaCluster c(1);
  c.createTopic("kv", 1);
  // key.format json over (id), value.format csv over (name, qty) with EXCEPT_KEY.
  KafkaRecord r1;
  r1.key = R"({"id":7})";
  r1.value = "apple,3";
  KafkaRecord r2;
  r2.key = R"({"id":8})";
  r2.value = "pear,5";
  KafkaRecord r3;  // no key: id is NULL
  r3.value = "fig,1";
  c.produce("kv", {r1, r2, r3});
  const std::string ddl = fmt::format(
      "CREATE TABLE t (id INT, name STRING, qty INT) WITH ('connector' = 'kafka', 'topic' = 'kv', "
      "'properties.bootstrap.servers' = '{}', 'key.format' = 'json', 'key.fields' = 'id', 'value.format' = 'csv', "
      "'value.fields-include' = 'EXCEPT_KEY', 'scan.startup.mode' = 'earliest-offset', "
      "'scan.bounded.mode' = 'latest-offset');\n",
      c.bootstrapServers());
  EXPECT_EQ(runSql(ddl + "SELECT * FROM t;"),
            (std::vector<std::string>{"+I[7, apple, 3]", "+I[8, pear, 5]", "+I[null, fig, 1]"}));
  // raw: the value bytes as one STRING column.
  EXPECT_EQ(runSql(fmt::format("CREATE TABLE r (line STRING) WITH ('connector' = 'kafka', 'topic' = 'kv', "
                               "'properties.bootstrap.servers' = '{}', 'format' = 'raw', 'scan.startup.mode' = "
                               "'earliest-offset', 'scan.bounded.mode' = 'latest-offset');\nSELECT * FROM r;",
                               c.bootstrapServers())),
            (std::vector<std::string>{"+I[apple,3]", "+I[pear,5]", "+I[fig,1]"}));
}

TEST(KafkaSourceTest, MalformedJsonFollowsIgnoreParseErrors) {
  MockKafkaCluster c(1);
  c.createTopic("j", 1);
  c.produce("j", {valueRecord(R"({"id":1,"name":"a"})"), valueRecord(R"({"id":2,"name":)"),
                  valueRecord(R"({"id":3,"name":"c"})")});
  auto ddl = [&](bool ignore) {
    return fmt::format("CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'j', "
                       "'properties.bootstrap.servers' = '{}', 'format' = 'json', 'json.ignore-parse-errors' = '{}', "
                       "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');\n",
                       c.bootstrapServers(), ignore ? "true" : "false");
  };
  EXPECT_EQ(runSql(ddl(true) + "SELECT * FROM t;"), (std::vector<std::string>{"+I[1, a]", "+I[3, c]"}));
  try {
    runSql(ddl(false) + "SELECT * FROM t;");
    FAIL() << "expected a parse error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Kafka topic 'j' partition 0 offset 1"), std::string::npos) << e.what();
  }
}

// The records before a malformed one are passed on before the job fails (as Flink's reader emits
// record by record); the malformed record and those after it are not.
TEST(KafkaSourceTest, MalformedRecordFailsAfterEmittingTheRecordsBeforeIt) {
  MockKafkaCluster c(1);
  c.createTopic("m", 1);
  c.produce("m", {valueRecord(R"({"id":1,"name":"a"})"), valueRecord(R"({"id":2,"name":"b"})"),
                  valueRecord(R"({"id":3,"name":"c"})"), valueRecord(R"({"id":4,"name":)"),
                  valueRecord(R"({"id":5,"name":"e"})")});
  auto env = testing::newEnvironment(1);
  std::mutex mu;
  std::vector<std::string> lines;
  env->setCollectCallback([&](const types::RowType&, const types::RowBatch& batch) {
    std::lock_guard<std::mutex> lock(mu);
    testing::appendChangelog(batch, lines);
  });
  try {
    env->executeScript(fmt::format(
        "CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'm', "
        "'properties.bootstrap.servers' = '{}', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset', "
        "'scan.bounded.mode' = 'latest-offset');\nSELECT * FROM t;",
        c.bootstrapServers()));
    FAIL() << "expected a parse error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Kafka topic 'm' partition 0 offset 3"), std::string::npos) << e.what();
  }
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(lines, (std::vector<std::string>{"+I[1, a]", "+I[2, b]", "+I[3, c]"}));
}

TEST(KafkaSourceTest, UnreachableBrokerAndMissingTopicFailInBoundedTime) {
  // Port 1 on loopback: nothing listens, every connection is refused.
  try {
    runSql("CREATE TABLE t (v STRING) WITH ('connector' = 'kafka', 'topic' = 'orders', "
           "'properties.bootstrap.servers' = '127.0.0.1:1', 'properties.default.api.timeout.ms' = '500', "
           "'format' = 'raw', 'scan.startup.mode' = 'earliest-offset');\nSELECT * FROM t;");
    FAIL() << "expected an error";
  } catch (const TransientError& e) {  // brokers out of reach: worth a restart
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'orders'"), std::string::npos) << e.what();
  }
  MockKafkaCluster c(1);
  try {
    runSql(fmt::format("CREATE TABLE t (v STRING) WITH ('connector' = 'kafka', 'topic' = 'nope', "
                       "'properties.bootstrap.servers' = '{}', 'format' = 'raw', "
                       "'scan.startup.mode' = 'earliest-offset');\nSELECT * FROM t;",
                       c.bootstrapServers()));
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Kafka topic 'nope' does not exist"), std::string::npos) << e.what();
  }
  // A topic deleted before the job starts is missing too.
  c.createTopic("gone", 1);
  c.markTopicDeleted("gone");
  try {
    runSql(
        fmt::format("CREATE TABLE t (v STRING) WITH ('connector' = 'kafka', 'topic' = 'gone', "
                    "'properties.bootstrap.servers' = '{}', 'format' = 'raw', "
                    "'scan.startup.mode' = 'earliest-offset');\nSELECT * FROM t;",
                    c.bootstrapServers()));
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Kafka topic 'gone' does not exist"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.bootstrapServers()), std::string::npos) << e.what();
  }
  // A topic pattern names itself and the brokers it could not list.
  try {
    runSql(
        "CREATE TABLE t (v STRING) WITH ('connector' = 'kafka', 'topic-pattern' = 'orders_.*', "
        "'properties.bootstrap.servers' = '127.0.0.1:1', 'properties.default.api.timeout.ms' = '500', "
        "'format' = 'raw', 'scan.startup.mode' = 'earliest-offset');\nSELECT * FROM t;");
    FAIL() << "expected an error";
  } catch (const TransientError& e) {
    EXPECT_NE(std::string(e.what()).find("'orders_.*'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1"), std::string::npos) << e.what();
  }
}

TEST(KafkaSourceTest, OptionErrorsNameTheKey) {
  auto err = [](const std::string& with) {
    try {
      runSql("CREATE TABLE t (id INT, v STRING) WITH ('connector' = 'kafka', " + with + ");\nSELECT * FROM t;");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(err("'topic' = 'a', 'format' = 'csv'").find("properties.bootstrap.servers"), std::string::npos);
  EXPECT_NE(err("'topic' = 'a', 'properties.bootstrap.servers' = 'x:1', 'format' = 'csv', 'scan.startup.mode' = "
                "'earliest-offset', 'bogus' = '1'")
                .find("bogus"),
            std::string::npos);
  EXPECT_NE(err("'topic' = 'a', 'properties.bootstrap.servers' = 'x:1', 'format' = 'csv', 'scan.startup.mode' = "
                "'earliest-offset', 'properties.no.such.property' = '1'")
                .find("properties.no.such.property"),
            std::string::npos);
  EXPECT_NE(err("'topic' = 'a', 'properties.bootstrap.servers' = 'x:1', 'format' = 'csv', 'scan.startup.mode' = "
                "'bogus-mode'")
                .find("scan.startup.mode"),
            std::string::npos);
  EXPECT_NE(err("'topic' = 'a', 'properties.bootstrap.servers' = 'x:1', 'format' = 'csv', 'scan.startup.mode' = "
                "'earliest-offset', 'scan.parallelism' = '0'")
                .find("Invalid configured parallelism 0"),
            std::string::npos);
  EXPECT_NE(err("'topic' = 'a', 'properties.bootstrap.servers' = 'x:1', 'format' = 'csv'").find("properties.group.id"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::connectors::kafka

namespace sluice::connectors::kafka {
namespace {

// Runs an unbounded read of a 2-partition topic "live" holding 6 records; once all 6 arrived, calls
// `disturb` and returns the error the job then fails with ("no error" if it ends without one).
std::string failureWhileReading(MockKafkaCluster& c, const std::function<void()>& disturb) {
  c.createTopic("live", 2);
  std::vector<KafkaRecord> records;
  for (int i = 0; i < 6; ++i) records.push_back(testing::valueRecord(std::to_string(i), i % 2));
  c.produce("live", records);
  Configuration config;
  auto registry = std::make_shared<table::FactoryRegistry>();
  registerBuiltinConnectors(*registry);
  table::TableEnvironment env(config, registry);
  std::promise<void> seen_all;
  std::mutex mu;
  size_t rows = 0;
  env.setCollectCallback([&](const types::RowType&, const types::RowBatch& batch) {
    std::lock_guard<std::mutex> lock(mu);
    const size_t before = rows;
    rows += batch.numRows();
    if (before < records.size() && rows >= records.size()) seen_all.set_value();
  });
  auto job = std::async(std::launch::async, [&] {
    env.executeScript(fmt::format("CREATE TABLE t (v INT) WITH ('connector' = 'kafka', 'topic' = 'live', "
                                  "'properties.bootstrap.servers' = '{}', 'format' = 'csv', "
                                  "'properties.default.api.timeout.ms' = '1000', "
                                  "'scan.startup.mode' = 'earliest-offset');\nSELECT * FROM t;",
                                  c.bootstrapServers()));
  });
  // Generous guards against a hang (the job normally fails a second or two after the disturbance).
  if (seen_all.get_future().wait_for(std::chrono::seconds(60)) != std::future_status::ready) return "no rows";
  disturb();
  if (job.wait_for(std::chrono::seconds(60)) != std::future_status::ready) return "still running";
  try {
    job.get();
  } catch (const UserError& e) {
    return std::string("UserError: ") + e.what();
  } catch (const TransientError& e) {
    return std::string("TransientError: ") + e.what();
  }
  return "no error";
}

// Runs an unbounded read of topic "live" (group 'g', auto commit every `interval_ms`) until `rows` rows
// arrived, then calls `seen` (while the job runs) and cancels the job. Returns the values read, sorted.
std::vector<int> readLiveThenCancel(MockKafkaCluster& c, size_t rows, int interval_ms,
                                    const std::function<void()>& seen) {
  Configuration config;
  auto registry = std::make_shared<table::FactoryRegistry>();
  registerBuiltinConnectors(*registry);
  table::TableEnvironment env(config, registry);
  std::promise<void> seen_all;
  std::mutex mu;
  std::vector<int> values;
  env.setCollectCallback([&](const types::RowType&, const types::RowBatch& batch) {
    std::lock_guard<std::mutex> lock(mu);
    const size_t before = values.size();
    for (size_t r = 0; r < batch.numRows(); ++r) values.push_back(static_cast<int>(batch.column(0).getLong(r)));
    if (before < rows && values.size() >= rows) seen_all.set_value();
  });
  auto job = std::async(std::launch::async, [&] {
    env.executeScript(
        fmt::format("CREATE TABLE t (v INT) WITH ('connector' = 'kafka', 'topic' = 'live', "
                    "'properties.bootstrap.servers' = '{}', 'format' = 'csv', "
                    "'properties.group.id' = 'g', 'properties.auto.offset.reset' = 'earliest', "
                    "'properties.enable.auto.commit' = 'true', "
                    "'properties.auto.commit.interval.ms' = '{}');\nSELECT * FROM t;",
                    c.bootstrapServers(), interval_ms));
  });
  // Generous guards against a hang.
  if (seen_all.get_future().wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    env.cancel();
    ADD_FAILURE() << "fewer than " << rows << " rows arrived";
    return {};
  }
  seen();
  env.cancel();
  if (job.wait_for(std::chrono::seconds(60)) != std::future_status::ready)
    ADD_FAILURE() << "cancel did not end the job";
  job.get();
  std::lock_guard<std::mutex> lock(mu);
  std::sort(values.begin(), values.end());
  return values;
}

TEST(KafkaSourceTest, AutoCommitWhileRunningAndOnCancel) {
  MockKafkaCluster c(1);
  c.createTopic("live", 2);
  auto produce = [&](int from, int to) {  // record i to partition i % 2
    std::vector<KafkaRecord> records;
    for (int i = from; i < to; ++i) records.push_back(testing::valueRecord(std::to_string(i), i % 2));
    c.produce("live", records);
  };
  produce(0, 6);
  // Every 10 ms while the job runs: the offsets reach the end (3 per partition) before it is cancelled.
  EXPECT_EQ(
      readLiveThenCancel(
          c, 6, 10,
          [&] {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            std::map<int, int64_t> committed;
            while (committed != std::map<int, int64_t>{{0, 3}, {1, 3}} && std::chrono::steady_clock::now() < deadline)
              committed = c.committedOffsets("g", "live");  // each call waits for a broker round trip
            EXPECT_EQ(committed, (std::map<int, int64_t>{{0, 3}, {1, 3}}));
          }),
      (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // An hour between periodic commits: the group's offsets move only by the commit on cancel. The job
  // resumes at 3 / 3 and reads the 4 new records only.
  produce(6, 10);
  EXPECT_EQ(readLiveThenCancel(c, 4, 3600000,
                               [&] {
                                 EXPECT_EQ(c.committedOffsets("g", "live"), (std::map<int, int64_t>{{0, 3}, {1, 3}}));
                               }),
            (std::vector<int>{6, 7, 8, 9}));
  EXPECT_EQ(c.committedOffsets("g", "live"), (std::map<int, int64_t>{{0, 5}, {1, 5}}));
}

TEST(KafkaSourceTest, TopicDeletedWhileReadingFailsTheJob) {
  MockKafkaCluster c(1);
  const std::string err = failureWhileReading(c, [&] { c.markTopicDeleted("live"); });
  EXPECT_EQ(err.rfind("UserError: ", 0), 0u) << err;
  EXPECT_NE(err.find("Kafka topic 'live' does not exist"), std::string::npos) << err;
}

TEST(KafkaSourceTest, BrokerGoingDownWhileReadingFailsTheJob) {
  MockKafkaCluster c(1);
  const std::string bootstrap = c.bootstrapServers();
  const std::string err = failureWhileReading(c, [&] { c.setBrokerDown(1, true); });
  EXPECT_EQ(err.rfind("TransientError: ", 0), 0u) << err;  // restart strategies retry it
  EXPECT_NE(err.find(bootstrap), std::string::npos) << err;
  EXPECT_NE(err.find("'live'"), std::string::npos) << err;
}

}  // namespace
}  // namespace sluice::connectors::kafka

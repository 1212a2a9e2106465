// Kafka under faults: the at-least-once sink across an injected failure (nothing lost), exactly-once
// refused with its reason, and brokers going away while a source reads or a sink writes (said on stderr
// at once, retried, then a retryable error naming topic and brokers). Every wait is a bounded poll on a
// condition (rows arrived, a line on stderr, the job ended); expected values come from what the test
// produced.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/mini_cluster.h"
#include "common/error.h"
#include "connectors/kafka/kafka_spec.h"
#include "kafka_test_util.h"

namespace sluice::connectors::kafka {
namespace {

using Clock = std::chrono::steady_clock;

// Polls `done` until it holds or 60 s passed (a guard against a hang); returns its last value.
bool waitFor(const std::function<bool()>& done) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Everything written to stderr (fd 2) while it lives, readable while the job runs; also passed on to the
// original stderr so test logs keep it.
class StderrTap {
 public:
  StderrTap() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    saved_ = ::dup(2);
    ::dup2(fds[1], 2);
    ::close(fds[1]);
    read_fd_ = fds[0];
    reader_ = std::thread([this] {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(read_fd_, buf, sizeof buf)) > 0) {
        (void)!::write(saved_, buf, static_cast<size_t>(n));
        std::lock_guard<std::mutex> lock(mu_);
        text_.append(buf, static_cast<size_t>(n));
      }
    });
  }
  ~StderrTap() {
    std::fflush(stderr);
    ::dup2(saved_, 2);  // closes the pipe's last write end: the reader sees EOF
    reader_.join();
    ::close(read_fd_);
    ::close(saved_);
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }
  bool contains(const std::string& s) { return text().find(s) != std::string::npos; }

 private:
  int saved_ = -1;
  int read_fd_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::string text_;
};

// An unbounded job of `script` whose collected rows are counted.
struct RunningJob {
  explicit RunningJob(const std::string& script, int parallelism = 1) : env(testing::newEnvironment(parallelism)) {
    env->setCollectCallback([this](const types::RowType&, const types::RowBatch& batch) {
      std::lock_guard<std::mutex> lock(mu);
      for (size_t r = 0; r < batch.numRows(); ++r) values.insert(batch.column(0).getLong(r));
    });
    job = std::async(std::launch::async, [this, script] { env->executeScript(script); });
  }
  ~RunningJob() {
    if (job.valid() && job.wait_for(std::chrono::seconds(0)) != std::future_status::ready) env->cancel();
    if (job.valid()) job.wait();
  }
  size_t rows() {
    std::lock_guard<std::mutex> lock(mu);
    return values.size();
  }
  bool ended() { return job.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  std::unique_ptr<table::TableEnvironment> env;
  std::mutex mu;
  std::multiset<int64_t> values;
  std::future<void> job;
};

void produceInts(MockKafkaCluster& c, const std::string& topic, int from, int to, int partitions) {
  std::vector<KafkaRecord> records;
  for (int i = from; i < to; ++i) records.push_back(testing::valueRecord(std::to_string(i), i % partitions));
  c.produce(topic, records);
}

std::string liveSource(const MockKafkaCluster& c, int timeout_ms) {
  return fmt::format(
      "CREATE TABLE t (v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'live', 'properties.bootstrap.servers' = "
      "'{}', 'format' = 'csv', 'properties.default.api.timeout.ms' = '{}', 'scan.startup.mode' = "
      "'earliest-offset');\nSELECT v FROM t;",
      c.bootstrapServers(), timeout_ms);
}

TEST(KafkaFaultTest, SourceReportsABrokerOutageAndReadsOnWhenItEnds) {
  MockKafkaCluster c(1);
  c.createTopic("live", 2);
  produceInts(c, "live", 0, 6, 2);
  StderrTap tap;
  RunningJob job(liveSource(c, 600000));  // far longer than the outage below
  ASSERT_TRUE(waitFor([&] { return job.rows() >= 6 || job.ended(); }));
  c.setBrokerDown(1, true);
  const std::string client = fmt::format("Kafka source of table 't' (topic 'live', brokers '{}')", c.bootstrapServers());
  ASSERT_TRUE(waitFor([&] { return tap.contains(client + ": the brokers cannot be reached"); })) << tap.text();
  EXPECT_TRUE(tap.contains("retrying for up to 600000 ms (properties.default.api.timeout.ms)")) << tap.text();
  EXPECT_FALSE(job.ended());
  c.setBrokerDown(1, false);
  produceInts(c, "live", 6, 10, 2);
  ASSERT_TRUE(waitFor([&] { return job.rows() >= 10 || job.ended(); }));
  EXPECT_TRUE(waitFor([&] { return tap.contains(client + ": the brokers answer again"); })) << tap.text();
  std::multiset<int64_t> expected;
  for (int i = 0; i < 10; ++i) expected.insert(i);
  {
    std::lock_guard<std::mutex> lock(job.mu);
    EXPECT_EQ(job.values, expected);
  }
  // The outage is in the job's metrics (`numConnectionOutages` of --metrics).
  job.env->cancel();
  job.job.get();
  ASSERT_EQ(job.env->jobs().size(), 1u);
  int64_t outages = 0;
  for (const auto& v : job.env->jobs()[0].execution->vertices) outages += v.connection_outages;
  EXPECT_EQ(outages, 1);
}

TEST(KafkaFaultTest, SourceFailsWithARetryableErrorAfterTheApiTimeout) {
  MockKafkaCluster c(1);
  c.createTopic("live", 2);
  produceInts(c, "live", 0, 6, 2);
  StderrTap tap;
  RunningJob job(liveSource(c, 2000));
  ASSERT_TRUE(waitFor([&] { return job.rows() >= 6 || job.ended(); }));
  c.setBrokerDown(1, true);
  ASSERT_TRUE(waitFor([&] { return job.ended(); }));
  try {
    job.job.get();
    FAIL() << "the job did not fail";
  } catch (const TransientError& e) {  // restart strategies retry it
    const std::string what = e.what();
    EXPECT_NE(what.find("topic 'live'"), std::string::npos) << what;
    EXPECT_NE(what.find(c.bootstrapServers()), std::string::npos) << what;
    EXPECT_NE(what.find("properties.default.api.timeout.ms = 2000"), std::string::npos) << what;
  }
  // Said while it retried, before the error.
  EXPECT_TRUE(waitFor([&] { return tap.contains("the brokers cannot be reached"); })) << tap.text();
}

TEST(KafkaFaultTest, SinkReportsABrokerOutageThenFailsAfterTheDeliveryTimeout) {
  MockKafkaCluster c(1);
  c.createTopic("out", 1);
  StderrTap tap;
  RunningJob job(fmt::format(
      "CREATE TABLE src (v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200', "
      "'fields.v.kind' = 'sequence', 'fields.v.start' = '1', 'fields.v.end' = '1000000');\n"
      "CREATE TABLE o (v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = "
      "'{}', 'format' = 'csv', 'properties.delivery.timeout.ms' = '3000');\n"
      "INSERT INTO o SELECT v FROM src;",
      c.bootstrapServers()));
  // Records reach the topic, then the broker goes away.
  ASSERT_TRUE(waitFor([&] { return !c.readAll("out", 1000).empty() || job.ended(); }));
  c.setBrokerDown(1, true);
  const std::string client = fmt::format("Kafka sink of table 'o' (topic 'out', brokers '{}')", c.bootstrapServers());
  ASSERT_TRUE(waitFor([&] { return tap.contains(client + ": the brokers cannot be reached"); })) << tap.text();
  EXPECT_TRUE(tap.contains("retrying for up to 3000 ms (properties.delivery.timeout.ms)")) << tap.text();
  ASSERT_TRUE(waitFor([&] { return job.ended(); }));
  try {
    job.job.get();
    FAIL() << "the job did not fail";
  } catch (const TransientError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Kafka topic 'out'"), std::string::npos) << what;
    EXPECT_NE(what.find(c.bootstrapServers()), std::string::npos) << what;
    EXPECT_NE(what.find("within 3000 ms (properties.delivery.timeout.ms)"), std::string::npos) << what;
  }
}

TEST(KafkaFaultTest, ExactlyOnceIsRefusedSayingWhy) {
  auto sinkError = [](const std::string& extra) {
    try {
      testing::runSql(
          "CREATE TABLE src (v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n"
          "CREATE TABLE o (v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = "
          "'127.0.0.1:1', 'format' = 'csv', 'sink.delivery-guarantee' = 'exactly-once'" +
          extra + ");\nINSERT INTO o SELECT v FROM src;");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Flink's rule first: a prefix is required.
  EXPECT_NE(sinkError("").find("'sink.transactional-id-prefix' must be specified"), std::string::npos)
      << sinkError("");
  const std::string why = sinkError(", 'sink.transactional-id-prefix' = 'job-a'");
  EXPECT_NE(why.find("'sink.delivery-guarantee' = 'exactly-once' of table 'o' is not supported"), std::string::npos)
      << why;
  EXPECT_NE(why.find("librdkafka cannot resume a transaction"), std::string::npos) << why;
  EXPECT_NE(why.find("'job-a'"), std::string::npos) << why;
  // A ConfigError from the option parser; a table only read from may carry the option (Flink checks sinks).
  table::ResolvedTable t;
  t.name = "o";
  t.physical_type = types::RowType{{"v"}, {types::LogicalType::bigint()}};
  t.options = {{"connector", "kafka"},           {"topic", "out"},
               {"properties.bootstrap.servers", "x:1"}, {"format", "csv"},
               {"sink.delivery-guarantee", "exactly-once"}, {"sink.transactional-id-prefix", "p"},
               {"scan.startup.mode", "earliest-offset"}};
  EXPECT_THROW(parseKafkaTable(t, false, false), ConfigError);
  try { parseKafkaTable(t, false, true); } catch (const UserError& e) { ADD_FAILURE() << e.what(); }
  t.options["sink.delivery-guarantee"] = "twice";
  EXPECT_THROW(parseKafkaTable(t, false, false), ConfigError);
}

// kafka 'in' (bounded at offset 10 of 4 partitions) -> kafka 'out' at-least-once, with records held in
// librdkafka for up to 1 s (linger.ms), so only the flush before each barrier gets them out before a
// checkpoint. Half the input first; the rest once the source's group shows a checkpoint of that half
// completed; the sink fails after `fail_after` records. Every input value reaches 'out' (duplicates
// allowed), and nothing else.
void checkAtLeastOnce(int64_t fail_after) {
  SCOPED_TRACE(fmt::format("sink failure after {} records", fail_after));
  MockKafkaCluster c(1);
  c.createTopic("in", 4);
  c.createTopic("out", 2);
  produceInts(c, "in", 0, 20, 4);
  auto env = testing::newFailingEnvironment(2, "Sink", fail_after);
  const std::string group = fmt::format("alo{}", fail_after);
  const std::string script = fmt::format(
      "CREATE TABLE i (v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = "
      "'{0}', 'properties.group.id' = '{1}', 'format' = 'csv', 'scan.startup.mode' = 'earliest-offset', "
      "'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = "
      "'partition:0,offset:10;partition:1,offset:10;partition:2,offset:10;partition:3,offset:10');\n"
      "CREATE TABLE o (v BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = "
      "'{0}', 'format' = 'csv', 'sink.delivery-guarantee' = 'at-least-once', 'properties.linger.ms' = '1000');\n"
      "INSERT INTO o SELECT v FROM i;\n",
      c.bootstrapServers(), group);
  auto job = std::async(std::launch::async, [&] { env->executeScript(script); });
  const std::map<int, int64_t> half{{0, 5}, {1, 5}, {2, 5}, {3, 5}};
  auto committed = [&] {
    std::map<int, int64_t> out;
    for (const auto& [p, o] : c.committedOffsets(group, "in"))
      if (o >= 0) out[p] = o;
    return out;
  };
  ASSERT_TRUE(waitFor([&] {
    return committed() == half || job.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }));
  ASSERT_EQ(committed(), half) << "no checkpoint of the first half completed";
  produceInts(c, "in", 20, 40, 4);
  job.get();
  ASSERT_EQ(env->jobs().size(), 1u);
  EXPECT_EQ(env->jobs()[0].execution->num_restarts, 1);
  std::multiset<std::string> written;
  for (const KafkaRecord& r : c.readAll("out")) written.insert(r.value.value_or("<null>"));
  std::set<std::string> expected;
  for (int i = 0; i < 40; ++i) expected.insert(std::to_string(i));
  EXPECT_GE(written.size(), expected.size());
  EXPECT_EQ(std::set<std::string>(written.begin(), written.end()), expected);
}

TEST(KafkaFaultTest, AtLeastOnceSinkLosesNothingAcrossAFailure) {
  // Sink subtask 0 gets some of the 20 records of the first half: fail after all of them and a few more.
  for (int64_t n : {10, 14}) checkAtLeastOnce(n);
}

}  // namespace
}  // namespace sluice::connectors::kafka

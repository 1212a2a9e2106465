// RestClient against the real REST server (RestServerEndpoint on a free port) serving a real job: the
// trickle job of job_registry_test (10 rows, then waits), with checkpointing, so savepoints and
// stop-with-savepoint run for real. Expected values come from the job built here (10 rows 1..10) and
// from the calls made; a dead peer is a port whose server was just shut down.

#include "rest/rest_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "graph/job_graph.h"
#include "rest/job_registry.h"
#include "rest/rest_server_endpoint.h"
#include "test_operators.h"

namespace sluice::rest {
namespace {

using nlohmann::json;
using sluice::testing::Collected;

graph::JobGraph trickleJob(const Configuration& conf, Collected* out) {
  auto source = testing::makeTransformation(
      1, "Source: trickle", graph::TransformationKind::kSource, 1,
      runtime::makeOperatorFactory([] { return std::make_unique<testing::TrickleSource>(10); }, true));
  auto sink = testing::makeTransformation(
      2, "Sink: collect", graph::TransformationKind::kSink, 2,
      runtime::makeOperatorFactory([out] { return std::make_unique<testing::CollectSink>(out); }),
      {testing::makeHashPartition(3, source, {0})});
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  job.name = "trickle";
  return job;
}

RestClientOptions local(int port) {
  RestClientOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  return o;
}

class RestClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conf.set("rest.port", "0");
    conf.set("execution.checkpointing.interval", "1 h");  // only the savepoints asked for here
    dir = std::filesystem::temp_directory_path() /
          ("sluice-rest-client-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    conf.set("execution.checkpointing.dir", (dir / "checkpoints").string());
    job = trickleJob(conf, &collected);
    handle = cluster::MiniCluster(conf).start(job, conf);
    registry->onJobSubmitted(job, conf, handle);
    endpoint = std::make_unique<RestServerEndpoint>(registry, conf);
    collected.waitForBatches(1);  // the rows are out: a savepoint now covers them
  }
  void TearDown() override {
    endpoint.reset();
    handle.reset();
    std::filesystem::remove_all(dir);
  }

  /// Polls the savepoint operation until it completed (each poll is a round trip to the server).
  json awaitOperation(RestClient& client, const std::string& trigger) {
    for (;;) {
      json op = json::parse(client.get("/jobs/" + handle->jobId() + "/savepoints/" + trigger));
      if (op["status"]["id"] == "COMPLETED") return op["operation"];
    }
  }

  Configuration conf;
  Collected collected;
  graph::JobGraph job;
  std::shared_ptr<JobRegistry> registry = std::make_shared<JobRegistry>(conf);
  std::shared_ptr<cluster::JobHandle> handle;
  std::unique_ptr<RestServerEndpoint> endpoint;
  std::filesystem::path dir;
};

TEST_F(RestClientTest, GetsTheJobsAndReportsErrorsWithFlinksText) {
  RestClient client(local(endpoint->port()));
  EXPECT_EQ(client.peer(), "127.0.0.1:" + std::to_string(endpoint->port()));
  const json jobs = json::parse(client.get("/jobs/overview"));
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  EXPECT_EQ(jobs["jobs"][0]["jid"], handle->jobId());
  EXPECT_EQ(jobs["jobs"][0]["state"], "RUNNING");

  const std::string unknown(32, 'a');
  try {
    client.patch("/jobs/" + unknown + "?mode=cancel");
    FAIL() << "no error for an unknown job";
  } catch (const RestClientError& e) {
    EXPECT_EQ(e.status(), 404);
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0], "Job " + unknown + " not found");
    EXPECT_NE(std::string(e.what()).find(client.peer()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("404: Job " + unknown + " not found"), std::string::npos) << e.what();
  }
  // No directory in the request nor in the job's configuration: Flink's 400.
  try {
    client.post("/jobs/" + handle->jobId() + "/savepoints", "{}");
    FAIL() << "no error without a savepoint directory";
  } catch (const RestClientError& e) {
    EXPECT_EQ(e.status(), 400);
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0],
              "Config key [execution.checkpointing.savepoint-dir] is not set. Property [target-directory] must be "
              "provided.");
  }

  client.patch("/jobs/" + handle->jobId() + "?mode=cancel");
  EXPECT_EQ(handle->wait().status, cluster::JobStatus::kCanceled);
}

TEST_F(RestClientTest, SavepointThenStopWithoutDrainEndsTheJobFinishedWithoutEndingItsOperators) {
  RestClient client(local(endpoint->port()));
  const std::string id = handle->jobId();
  const std::string savepoint_trigger = json::parse(
      client.post("/jobs/" + id + "/savepoints", json{{"target-directory", (dir / "sp").string()}}.dump()))["request-id"];
  const json sp = awaitOperation(client, savepoint_trigger);
  ASSERT_TRUE(sp.contains("location")) << sp.dump();
  EXPECT_TRUE(std::filesystem::exists(sp["location"].get<std::string>() + "/_metadata")) << sp.dump();
  EXPECT_FALSE(handle->isDone());  // a savepoint leaves the job running

  const std::string stop_trigger = json::parse(
      client.post("/jobs/" + id + "/stop", json{{"targetDirectory", (dir / "stop").string()}, {"drain", false}}.dump()))
      ["request-id"];
  const json stop = awaitOperation(client, stop_trigger);
  ASSERT_TRUE(stop.contains("location")) << stop.dump();
  EXPECT_EQ(std::filesystem::path(stop["location"].get<std::string>()).parent_path(), dir / "stop");
  EXPECT_TRUE(std::filesystem::exists(stop["location"].get<std::string>() + "/_metadata"));
  // The operation completes once the job ended: FINISHED, not cancelled; every row arrived, and the sink
  // was not ended (Flink's stop without --drain: no endInput).
  EXPECT_TRUE(handle->isDone());
  EXPECT_EQ(handle->wait().status, cluster::JobStatus::kFinished);
  std::lock_guard<std::mutex> lock(collected.mu);
  EXPECT_EQ(collected.rows.size(), 10u);
  EXPECT_FALSE(collected.ended);
}

TEST_F(RestClientTest, StopWithDrainEndsTheOperators) {
  RestClient client(local(endpoint->port()));
  const std::string trigger = json::parse(client.post(
      "/jobs/" + handle->jobId() + "/stop", json{{"targetDirectory", (dir / "stop").string()}, {"drain", true}}.dump()))
      ["request-id"];
  ASSERT_TRUE(awaitOperation(client, trigger).contains("location"));
  EXPECT_EQ(handle->wait().status, cluster::JobStatus::kFinished);
  std::lock_guard<std::mutex> lock(collected.mu);
  EXPECT_EQ(collected.rows.size(), 10u);
  EXPECT_TRUE(collected.ended);
}

TEST_F(RestClientTest, DeadPeerIsNamed) {
  const int port = endpoint->port();
  endpoint.reset();  // nothing listens there any more
  RestClient client(local(port));
  try {
    client.get("/jobs/overview");
    FAIL() << "no error for a dead peer";
  } catch (const RestClientError& e) {
    EXPECT_EQ(e.status(), 0);
    EXPECT_EQ(std::string(e.what()).rfind("Could not connect to 127.0.0.1:" + std::to_string(port) + ": ", 0), 0u)
        << e.what();
  }
  handle->cancel();
}

// The trickle job without execution.checkpointing.interval into one sink subtask whose snapshotState waits
// at a gate, so a savepoint stays in progress exactly as long as the test wants.
class GatedSavepointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conf.set("rest.port", "0");
    dir = std::filesystem::temp_directory_path() /
          ("sluice-rest-gated-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    auto source = testing::makeTransformation(
        1, "Source: trickle", graph::TransformationKind::kSource, 1,
        runtime::makeOperatorFactory([] { return std::make_unique<testing::TrickleSource>(10); }, true));
    auto sink = testing::makeTransformation(
        2, "Sink: gated", graph::TransformationKind::kSink, 1,
        runtime::makeOperatorFactory([this] { return std::make_unique<testing::GatedSnapshotSink>(&collected, &gate); }),
        {testing::makeHashPartition(3, source, {0})});
    job = graph::buildJobGraph({sink}, conf);
    job.name = "gated";
    handle = cluster::MiniCluster(conf).start(job, conf);
    registry->onJobSubmitted(job, conf, handle);
    endpoint = std::make_unique<RestServerEndpoint>(registry, conf);
    port = endpoint->port();
    collected.waitForBatches(1);
  }
  void TearDown() override {
    gate.open();  // a failed expectation must not leave the task thread waiting
    endpoint.reset();
    if (!handle->isDone()) handle->cancel();
    handle->waitFor(std::chrono::seconds(60));
    handle.reset();
    std::filesystem::remove_all(dir);
  }

  Configuration conf;
  Collected collected;
  testing::Gate gate;
  graph::JobGraph job;
  std::shared_ptr<JobRegistry> registry = std::make_shared<JobRegistry>(conf);
  std::shared_ptr<cluster::JobHandle> handle;
  std::unique_ptr<RestServerEndpoint> endpoint;
  int port = 0;
  std::filesystem::path dir;
};

// `sluice stop` against `sluice run`: the stopped job ends the script at once, and the run keeps its server
// only while JobRegistry::awaitResultsRead waits. The stop's result counts as unread from its trigger on,
// so the client polling for it gets the savepoint's path, not a refused connection.
TEST_F(GatedSavepointTest, StopResultStaysServedUntilTheClientReadIt) {
  const std::string id = handle->jobId();
  std::string location, error;
  std::thread stop_client([&] {
    RestClient client(local(port));
    try {
      const std::string trigger = json::parse(client.post(
          "/jobs/" + id + "/stop", json{{"targetDirectory", (dir / "stop").string()}, {"drain", false}}.dump()))
          ["request-id"];
      SavepointPolling polling;
      polling.timeout = std::chrono::seconds(60);
      location = awaitSavepointOperation(client, id, trigger, polling);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  gate.waitForArrival();  // the stop's savepoint is being taken: its trigger was accepted
  EXPECT_FALSE(registry->awaitResultsRead(std::chrono::milliseconds(0)));
  gate.open();
  // What `sluice run` does once its script ended: report the job's end, wait for the readers, close.
  const cluster::JobExecutionResult result = handle->wait();
  EXPECT_EQ(result.status, cluster::JobStatus::kFinished);
  registry->onJobExecuted(id, &result, nullptr);
  EXPECT_TRUE(registry->awaitResultsRead(std::chrono::seconds(60)));
  endpoint.reset();
  stop_client.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(std::filesystem::path(location).parent_path(), dir / "stop");
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(location) / "_metadata")) << location;
}

// The server goes while the client waits for a savepoint: the error names the job and the state it was
// last seen in, not only the refused connection.
TEST_F(GatedSavepointTest, ServerGoneWhileWaitingNamesTheJobAndItsLastState) {
  const std::string id = handle->jobId();
  RestClient client(local(port));
  const std::string trigger = json::parse(client.post(
      "/jobs/" + id + "/savepoints", json{{"target-directory", (dir / "sp").string()}}.dump()))["request-id"];
  gate.waitForArrival();  // in progress until the gate opens
  SavepointPolling polling;
  polling.timeout = std::chrono::seconds(60);
  int pauses = 0;
  // The first pause comes after one round: the operation was IN_PROGRESS and the job RUNNING.
  polling.pause = [&](std::chrono::milliseconds) {
    ++pauses;
    endpoint.reset();
  };
  try {
    awaitSavepointOperation(client, id, trigger, polling);
    FAIL() << "no error once the server went";
  } catch (const RestClientError& e) {
    EXPECT_EQ(e.status(), 0);
    const std::string peer = "127.0.0.1:" + std::to_string(port);
    EXPECT_EQ(std::string(e.what()).rfind("The REST API at " + peer + " went away while waiting for the savepoint of job " +
                                              id + " (last seen RUNNING): Could not connect to " + peer + ": ",
                                          0),
              0u)
        << e.what();
  }
  EXPECT_EQ(pauses, 1);
}

TEST(RestClientHostTest, UnresolvableHostIsNamed) {
  RestClientOptions o;
  o.host = "nohost.invalid";  // RFC 2606: .invalid never resolves
  o.port = 8081;
  RestClient client(o);
  try {
    client.get("/jobs/overview");
    FAIL() << "no error for a host that does not resolve";
  } catch (const RestClientError& e) {
    EXPECT_EQ(e.status(), 0);
    EXPECT_EQ(std::string(e.what()).rfind("Could not resolve the host 'nohost.invalid' of nohost.invalid:8081: ", 0), 0u)
        << e.what();
  }
}

TEST(RestClientOptionsTest, AddressFromTheConfigurationOrTheFlag) {
  Configuration conf;
  RestClientOptions o = restClientOptions(conf, std::nullopt);
  EXPECT_EQ(o.host, "localhost");  // Flink's CLI default
  EXPECT_EQ(o.port, 8081);
  EXPECT_EQ(o.connection_timeout_ms, 15000);
  EXPECT_EQ(o.idleness_timeout_ms, 300000);
  conf.set("rest.address", "example.org");
  conf.set("rest.port", "9000");
  o = restClientOptions(conf, std::nullopt);
  EXPECT_EQ(o.host, "example.org");
  EXPECT_EQ(o.port, 9000);
  o = restClientOptions(conf, "10.0.0.1:1234");
  EXPECT_EQ(o.host, "10.0.0.1");
  EXPECT_EQ(o.port, 1234);
  o = restClientOptions(conf, "http://h:5/");
  EXPECT_EQ(o.host, "h");
  EXPECT_EQ(o.port, 5);
  o = restClientOptions(conf, "other");
  EXPECT_EQ(o.host, "other");
  EXPECT_EQ(o.port, 9000);  // -m HOST keeps the configured port
  EXPECT_THROW(restClientOptions(conf, "h:http"), UserError);
  EXPECT_THROW(restClientOptions(conf, "h:70000"), UserError);
  EXPECT_THROW(restClientOptions(conf, ":80"), UserError);
  EXPECT_THROW(restClientOptions(conf, ""), UserError);  // -m '' is no address, not the default
  conf.set("rest.port", "0");
  EXPECT_THROW(restClientOptions(conf, std::nullopt), ConfigError);
}

}  // namespace
}  // namespace sluice::rest

// JobRegistry and RestApi over a real job on a MiniCluster: a source that emits 10 rows and then waits
// until cancelled, hash-partitioned to a sink at parallelism 2. The registry is fed as the
// TableEnvironment feeds it (onJobSubmitted, onJobExecuted); the expected values come from the graph built
// here (2 vertices, parallelism 1 and 2) and from the calls made.

#include "rest/job_registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/job_graph.h"
#include "rest/rest_api.h"
#include "test_operators.h"

namespace sluice::rest {
namespace {

using nlohmann::json;
using sluice::testing::Collected;

graph::JobGraph trickleJob(const Configuration& conf, Collected* out) {
  auto source = testing::makeTransformation(
      1, "Source: trickle", graph::TransformationKind::kSource, 1,
      runtime::makeOperatorFactory([] { return std::make_unique<testing::TrickleSource>(10); }, true));
  auto exchange = testing::makeHashPartition(2, source, {0});
  auto sink = testing::makeTransformation(
      3, "Sink: collect", graph::TransformationKind::kSink, 2,
      runtime::makeOperatorFactory([out] { return std::make_unique<testing::CollectSink>(out); }), {exchange});
  graph::JobGraph job = graph::buildJobGraph({sink}, conf);
  job.name = "trickle";
  return job;
}

json get(const RestApi& api, const std::string& path, int status = 200) {
  const RestResponse r = api.handle(RestRequest{"GET", path, {}, ""});
  EXPECT_EQ(r.status, status) << path << ": " << r.body;
  return json::parse(r.body);
}

/// The trickle job started on a MiniCluster and reported to a registry that a RestApi reads.
class JobRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("sluice-job-registry-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    job = trickleJob(conf, &collected);
    handle = cluster::MiniCluster(conf).start(job, conf);
    registry->onJobSubmitted(job, conf, handle);
  }
  Configuration conf;
  Collected collected;
  graph::JobGraph job;
  std::shared_ptr<JobRegistry> registry = std::make_shared<JobRegistry>(conf);
  RestApi api{registry};
  std::shared_ptr<cluster::JobHandle> handle;
  std::filesystem::path dir;
  void TearDown() override { std::filesystem::remove_all(dir); }
};

TEST_F(JobRegistryTest, RunningJobThenCancelledThroughTheApi) {
  const std::string id = handle->jobId();

  const json details = get(api, "/jobs/" + id);
  EXPECT_EQ(details["name"], "trickle");
  EXPECT_EQ(details["state"], "RUNNING");
  ASSERT_EQ(details["vertices"].size(), 2u);
  EXPECT_EQ(details["vertices"][0]["parallelism"], 1);
  EXPECT_EQ(details["vertices"][1]["parallelism"], 2);
  EXPECT_EQ(details["plan"]["jid"], id);  // the submission's id, not the graph's
  EXPECT_EQ(get(api, "/jobs/" + id + "/vertices/" + details["vertices"][1]["id"].get<std::string>())["subtasks"].size(),
            2u);
  EXPECT_EQ(get(api, "/overview")["jobs-running"], 1);
  // No execution.checkpointing.interval: no statistics, but a STREAMING job takes savepoints (Flink's).
  get(api, "/jobs/" + id + "/checkpoints", 404);
  EXPECT_EQ(api.handle(RestRequest{"POST", "/jobs/" + id + "/savepoints", {}, "{}"}).status, 400);  // no directory
  collected.waitForBatches(1);
  const RestResponse triggered = api.handle(RestRequest{
      "POST", "/jobs/" + id + "/savepoints", {}, json{{"target-directory", (dir / "sp").string()}}.dump()});
  ASSERT_EQ(triggered.status, 202) << triggered.body;
  const std::string trigger = json::parse(triggered.body)["request-id"];
  std::optional<SavepointOperation> op;
  // The savepoint runs on the registry's thread: poll its state (each call takes the registry's lock).
  while ((op = registry->savepoint(id, trigger)) && op->status == SavepointOperation::Status::kInProgress) {
    std::this_thread::yield();
  }
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->status, SavepointOperation::Status::kCompleted) << op->failure;
  EXPECT_EQ(std::filesystem::path(op->location).parent_path(), dir / "sp");
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(op->location) / "_metadata"));
  get(api, "/jobs/" + id + "/checkpoints", 404);  // a savepoint is no checkpoint

  const RestResponse cancel = api.handle(RestRequest{"PATCH", "/jobs/" + id, {{"mode", "cancel"}}, ""});
  EXPECT_EQ(cancel.status, 202);
  const std::string state = get(api, "/jobs/" + id)["state"];
  EXPECT_TRUE(state == "CANCELLING") << state;  // until the client reports the end
  const cluster::JobExecutionResult result = handle->wait();
  registry->onJobExecuted(id, &result, nullptr);
  EXPECT_EQ(get(api, "/jobs/" + id)["state"], "CANCELED");
  EXPECT_EQ(get(api, "/jobs")["jobs"][0]["status"], "CANCELED");
  EXPECT_EQ(get(api, "/overview")["jobs-cancelled"], 1);
  // An ended job: cancel and savepoint conflict with its state.
  EXPECT_EQ(api.handle(RestRequest{"PATCH", "/jobs/" + id, {}, ""}).status, 409);
  EXPECT_EQ(api.handle(RestRequest{"POST", "/jobs/" + id + "/savepoints", {}, ""}).status, 409);
}

TEST_F(JobRegistryTest, FailedJobShowsItsException) {
  handle->cancel();
  handle->wait();
  // The client reports a failure (as runJob does when wait() throws).
  registry->onJobExecuted(handle->jobId(), nullptr, std::make_exception_ptr(UserError("Job 'trickle' failed: boom")));
  const json e = get(api, "/jobs/" + handle->jobId() + "/exceptions");
  EXPECT_EQ(e["root-exception"], "Job 'trickle' failed: boom");
  EXPECT_EQ(e["exceptionHistory"]["entries"][0]["exceptionName"], "sluice::UserError");
  EXPECT_EQ(get(api, "/jobs/" + handle->jobId())["state"], "FAILED");
  EXPECT_EQ(get(api, "/overview")["jobs-failed"], 1);
}

TEST(JobRegistryBatchTest, ABatchJobTakesNoSavepoint) {
  Configuration conf;
  conf.set("execution.runtime-mode", "BATCH");
  Collected collected;
  const graph::JobGraph job = trickleJob(conf, &collected);
  std::shared_ptr<cluster::JobHandle> handle = cluster::MiniCluster(conf).start(job, conf);
  auto registry = std::make_shared<JobRegistry>(conf);
  RestApi api{registry};
  registry->onJobSubmitted(job, conf, handle);
  const std::string id = handle->jobId();
  for (const char* path : {"/savepoints", "/stop"}) {
    const RestResponse r = api.handle(RestRequest{"POST", "/jobs/" + id + path, {}, R"({"target-directory": "/tmp/x", "targetDirectory": "/tmp/x"})"});
    EXPECT_EQ(r.status, 409) << path;
    EXPECT_EQ(json::parse(r.body)["errors"][0],
              "Job " + id + " is not a streaming job: a BATCH job ('execution.runtime-mode') takes no savepoints")
        << path;
  }
  handle->cancel();
  const cluster::JobExecutionResult result = handle->wait();
  registry->onJobExecuted(id, &result, nullptr);
}

}  // namespace
}  // namespace sluice::rest

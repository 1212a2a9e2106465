// JobRegistry and RestApi over a real job on a MiniCluster: a source that emits 10 rows and then waits
// until cancelled, hash-partitioned to a sink at parallelism 2. The registry is fed as the
// TableEnvironment feeds it (onJobSubmitted, onJobExecuted); the expected values come from the graph built
// here (2 vertices, parallelism 1 and 2) and from the calls made.

#include "rest/job_registry.h"

#include <gtest/gtest.h>

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
  // Checkpointing is off: no statistics, and a savepoint is refused at once.
  get(api, "/jobs/" + id + "/checkpoints", 404);
  EXPECT_EQ(api.handle(RestRequest{"POST", "/jobs/" + id + "/savepoints", {}, "{}"}).status, 409);

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

}  // namespace
}  // namespace sluice::rest

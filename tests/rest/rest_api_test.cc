// RestApi's routing and errors without sockets: an empty registry (no job has run), so every job path
// answers 404, known paths with another method 405, and unknown paths 404, all in Flink's error shape.

#include "rest/rest_api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace sluice::rest {
namespace {

using nlohmann::json;

RestResponse call(const RestApi& api, const std::string& method, const std::string& path,
                  std::multimap<std::string, std::string> query = {}, std::string body = "") {
  return api.handle(RestRequest{method, path, std::move(query), std::move(body)});
}

Configuration twoTaskManagers() {
  Configuration c;
  c.set("local.number-taskmanager", "2");
  c.set("taskmanager.numberOfTaskSlots", "3");
  return c;
}

TEST(RestApiTest, OverviewOfAClusterWithoutJobs) {
  RestApi api(std::make_shared<JobRegistry>(twoTaskManagers()));
  for (const std::string path : {"/overview", "/v1/overview", "/overview/"}) {
    const RestResponse r = call(api, "GET", path);
    ASSERT_EQ(r.status, 200) << path;
    const json o = json::parse(r.body);
    EXPECT_EQ(o["taskmanagers"], 2);
    EXPECT_EQ(o["slots-total"], 6);
    EXPECT_EQ(o["slots-available"], 6);
    EXPECT_EQ(o["jobs-running"], 0);
  }
  EXPECT_EQ(json::parse(call(api, "GET", "/jobs").body), json::parse(R"({"jobs":[]})"));
  EXPECT_EQ(json::parse(call(api, "GET", "/jobs/overview").body), json::parse(R"({"jobs":[]})"));
  EXPECT_EQ(json::parse(call(api, "GET", "/taskmanagers").body)["taskmanagers"].size(), 2u);
  EXPECT_EQ(call(api, "GET", "/config").status, 200);
}

TEST(RestApiTest, UnknownPathsJobsAndMethods) {
  RestApi api(std::make_shared<JobRegistry>(Configuration()));
  const std::string id = "0123456789abcdef0123456789abcdef";
  struct Case {
    std::string method, path;
    int status;
  };
  for (const Case& c : std::vector<Case>{{"GET", "/nope", 404},
                                         {"GET", "/jobs/" + id, 404},
                                         {"GET", "/jobs/" + id + "/plan", 404},
                                         {"GET", "/jobs/" + id + "/vertices/abc", 404},
                                         {"GET", "/jobs/" + id + "/vertices/abc/metrics", 404},
                                         {"GET", "/jobs/" + id + "/savepoints/abc", 404},
                                         {"GET", "/jobs/" + id + "/unknown", 404},
                                         {"PATCH", "/jobs/" + id, 404},
                                         {"POST", "/jobs/" + id + "/savepoints", 404},
                                         {"DELETE", "/jobs/" + id, 405},
                                         {"POST", "/overview", 405},
                                         {"GET", "/jobs/" + id + "/savepoints", 405},
                                         {"PATCH", "/jobs/" + id + "/plan", 405}}) {
    const RestResponse r = call(api, c.method, c.path);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path;
    const json body = json::parse(r.body);
    ASSERT_TRUE(body["errors"].is_array()) << r.body;
    EXPECT_EQ(body["errors"].size(), 1u);
  }
  EXPECT_EQ(json::parse(call(api, "GET", "/jobs/" + id).body)["errors"][0], "Job " + id + " not found");
  EXPECT_EQ(json::parse(call(api, "GET", "/nope").body)["errors"][0], "Not found: /nope");
}

}  // namespace
}  // namespace sluice::rest

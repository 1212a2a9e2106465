#pragma once
/// JobListener: told when a job of a client starts and when it ends (Flink's
/// org.apache.flink.core.execution.JobListener, registered with StreamExecutionEnvironment#registerJobListener).
/// The REST API of `sluice run` (src/rest/) learns of the embedded cluster's jobs this way.

#include <exception>
#include <memory>
#include <string>

#include "common/config.h"

namespace sluice::graph {
struct JobGraph;
}

namespace sluice::cluster {

class JobHandle;
struct JobExecutionResult;

class JobListener {
 public:
  virtual ~JobListener() = default;
  /// The job was deployed. `handle` is shared: a listener may keep it (and use it from any thread, see
  /// JobHandle) past the job's end. `config` is the job's configuration. Called on the client thread that
  /// submitted the job; must not throw.
  virtual void onJobSubmitted(const graph::JobGraph& job, const Configuration& config,
                              const std::shared_ptr<JobHandle>& handle) = 0;
  /// The job ended: `result` (FINISHED or CANCELED) when it did not fail, else null and `failure` holds its
  /// error. Called on the client thread after every task thread stopped; must not throw.
  virtual void onJobExecuted(const std::string& job_id, const JobExecutionResult* result,
                             std::exception_ptr failure) = 0;
};

}  // namespace sluice::cluster

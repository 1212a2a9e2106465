#include "api/execution_environment.h"

#include "api/datastream.h"
#include "cluster/mini_cluster.h"
#include "common/error.h"
#include "graph/job_graph.h"
#include "graph/plan.h"

namespace sluice::api {

int64_t JobExecutionResult::getAccumulatorResult(const std::string& name) const {
  auto it = accumulators_.find(name);
  if (it == accumulators_.end()) throw UserError(fmt::format("No accumulator named '{}' in job '{}'", name, job_name_));
  return it->second;
}

namespace {

JobExecutionResult toResult(const cluster::JobExecutionResult& r, const runtime::ExecutionScope& scope) {
  return JobExecutionResult(r.job_id, r.job_name, r.wall_time_ms,
                            const_cast<runtime::ExecutionScope&>(scope).accumulators().snapshot(),
                            r.status == cluster::JobStatus::kCanceled);
}

}  // namespace

JobClient::JobClient(std::unique_ptr<cluster::JobHandle> handle, std::shared_ptr<runtime::ExecutionScopeSlot> scopes)
    : handle_(std::move(handle)), scopes_(std::move(scopes)) {}
JobClient::~JobClient() = default;
const std::string& JobClient::getJobID() const { return handle_->jobId(); }
void JobClient::cancel() { handle_->cancel(); }
JobExecutionResult JobClient::getJobExecutionResult() {
  const cluster::JobExecutionResult r = handle_->wait();
  return toResult(r, *scopes_->current());
}
bool JobClient::waitFor(std::chrono::milliseconds timeout) { return handle_->waitFor(timeout); }
bool JobClient::isDone() const { return handle_->isDone(); }

StreamExecutionEnvironment StreamExecutionEnvironment::getExecutionEnvironment() {
  return StreamExecutionEnvironment(Configuration());
}

StreamExecutionEnvironment::StreamExecutionEnvironment(Configuration config) : config_(std::move(config)) {}

StreamExecutionEnvironment& StreamExecutionEnvironment::setParallelism(int parallelism) {
  if (parallelism < 1) {
    throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': must be at least 1", parallelism,
                                  options::kParallelismDefault.key()));
  }
  config_.set(options::kParallelismDefault.key(), std::to_string(parallelism));
  return *this;
}

StreamExecutionEnvironment& StreamExecutionEnvironment::enableCheckpointing(int64_t interval_ms, bool at_least_once) {
  config_.set(options::kCheckpointingInterval.key(), std::to_string(interval_ms) + " ms");
  config_.set(options::kCheckpointingConsistencyMode.key(), at_least_once ? "AT_LEAST_ONCE" : "EXACTLY_ONCE");
  return *this;
}

int StreamExecutionEnvironment::getParallelism() const { return config_.get(options::kParallelismDefault); }

StreamExecutionEnvironment& StreamExecutionEnvironment::setMaxParallelism(int max_parallelism) {
  if (max_parallelism < 1) {
    throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': must be at least 1",
                                  max_parallelism, options::kMaxParallelism.key()));
  }
  config_.set(options::kMaxParallelism.key(), std::to_string(max_parallelism));
  return *this;
}

StreamExecutionEnvironment& StreamExecutionEnvironment::setRuntimeMode(RuntimeExecutionMode mode) {
  config_.set(options::kRuntimeMode.key(), mode == RuntimeExecutionMode::BATCH ? "BATCH" : "STREAMING");
  return *this;
}

RuntimeExecutionMode StreamExecutionEnvironment::getRuntimeMode() const {
  std::string m = config_.get(options::kRuntimeMode);
  for (char& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return m == "BATCH" ? RuntimeExecutionMode::BATCH : RuntimeExecutionMode::STREAMING;
}

StreamExecutionEnvironment& StreamExecutionEnvironment::disableOperatorChaining() {
  config_.set(options::kOperatorChaining.key(), "false");
  return *this;
}

StreamExecutionEnvironment& StreamExecutionEnvironment::setBufferTimeout(int64_t ms) {
  config_.set(options::kBufferTimeout.key(), std::to_string(ms));
  return *this;
}

graph::TransformationPtr StreamExecutionEnvironment::newTransformation(graph::TransformationKind kind,
                                                                       std::string name,
                                                                       std::vector<graph::TransformationPtr> inputs) {
  auto t = std::make_shared<graph::Transformation>();
  t->id = next_id_++;
  t->kind = kind;
  t->name = std::move(name);
  t->inputs = std::move(inputs);
  return t;
}

std::vector<graph::TransformationPtr> StreamExecutionEnvironment::takeSinks(const char* what) {
  if (sinks_.empty()) {
    throw UserError(fmt::format("No operators defined in streaming topology. Cannot {}: add a sink (print, sinkTo, "
                                "collect) first.",
                                what));
  }
  std::vector<graph::TransformationPtr> sinks;
  sinks.swap(sinks_);
  return sinks;
}

JobExecutionResult StreamExecutionEnvironment::execute(const std::string& job_name) {
  auto client = executeAsync(job_name);
  return client->getJobExecutionResult();
}

std::unique_ptr<JobClient> StreamExecutionEnvironment::executeAsync(const std::string& job_name) {
  const std::vector<graph::TransformationPtr> sinks = takeSinks("execute");
  const graph::JobGraph job =
      graph::buildJobGraph(sinks, config_, job_name.empty() ? std::string("Flink Streaming Job") : job_name);
  scope_slot_->reset();
  cluster::MiniCluster cluster(config_);
  cluster::SubmitOptions submit;
  // A restarted attempt gets fresh enumerators (restored from the sources' state) and accumulators.
  submit.on_new_attempt = [slot = scope_slot_] { slot->reset(); };
  // A region failover: the restarted sources get fresh enumerators; the running ones keep theirs.
  submit.on_region_restart = [slot = scope_slot_](const std::vector<int>& node_ids) {
    const std::shared_ptr<runtime::ExecutionScope> scope = slot->current();
    for (int id : node_ids) scope->forget(id);
  };
  return std::make_unique<JobClient>(cluster.start(job, config_, std::move(submit)), scope_slot_);
}

std::string StreamExecutionEnvironment::getExecutionPlan(const std::string& job_name) const {
  if (sinks_.empty()) {
    throw UserError("No operators defined in streaming topology. Cannot generate the execution plan.");
  }
  return graph::jobGraphToJson(
      graph::buildJobGraph(sinks_, config_, job_name.empty() ? std::string("Flink Streaming Job") : job_name));
}

}  // namespace sluice::api

namespace sluice::api {

std::string describeWindowAssigner(const WindowAssigner& a) {
  const bool tumbling = a.size_ms == a.slide_ms;
  std::string s = fmt::format("{}{}TimeWindows({}", tumbling ? "Tumbling" : "Sliding",
                              a.event_time ? "Event" : "Processing", a.size_ms);
  if (!tumbling) s += fmt::format(", {}", a.slide_ms);
  return s + ")";
}

}  // namespace sluice::api

namespace sluice::api {

DataStream<int64_t> StreamExecutionEnvironment::fromSequence(int64_t from, int64_t to) {
  return fromSource(std::make_shared<NumberSequenceSource>(from, to), WatermarkStrategy<int64_t>::noWatermarks(),
                    "Sequence Source");
}

}  // namespace sluice::api

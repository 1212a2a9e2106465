#include "cluster/job_metrics.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace sluice::cluster {

void computeRates(SubtaskProgress& s, const SubtaskProgress* previous) {
  const runtime::TaskIOMetrics& io = s.io;
  runtime::TaskIOMetrics base;  // zeros: the window starts when the subtask started
  if (previous != nullptr) base = previous->io;
  const int64_t window_ms = io.running_time_ms - base.running_time_ms;
  if (window_ms <= 0) {
    s.busy_time_ms_per_second = s.idle_time_ms_per_second = s.back_pressured_time_ms_per_second = 0;
    s.num_records_in_per_second = s.num_records_out_per_second = 0;
    s.num_bytes_in_per_second = s.num_bytes_out_per_second = 0;
    return;
  }
  const double per_second = 1000.0 / static_cast<double>(window_ms);
  auto rate = [&](int64_t now, int64_t before) {
    return static_cast<double>(std::max<int64_t>(0, now - before)) * per_second;
  };
  s.idle_time_ms_per_second = rate(io.idle_time_ms, base.idle_time_ms);
  s.back_pressured_time_ms_per_second = rate(io.back_pressured_time_ms, base.back_pressured_time_ms);
  // Whole milliseconds of three clocks can exceed the window by a rounding step: scale back to 1000.
  const double waited = s.idle_time_ms_per_second + s.back_pressured_time_ms_per_second;
  if (waited > 1000.0) {
    s.idle_time_ms_per_second *= 1000.0 / waited;
    s.back_pressured_time_ms_per_second *= 1000.0 / waited;
  }
  // Busy is the rest of the window (Flink: neither idle nor back pressured), so the three add up to 1000.
  s.busy_time_ms_per_second = std::max(0.0, 1000.0 - s.idle_time_ms_per_second - s.back_pressured_time_ms_per_second);
  s.num_records_in_per_second = rate(io.num_records_in, base.num_records_in);
  s.num_records_out_per_second = rate(io.num_records_out, base.num_records_out);
  s.num_bytes_in_per_second = rate(io.num_bytes_in, base.num_bytes_in);
  s.num_bytes_out_per_second = rate(io.num_bytes_out, base.num_bytes_out);
}

void aggregateSubtasks(VertexProgress& v) {
  v.in_pool_usage = v.out_pool_usage = 0;
  v.num_bytes_in = v.num_bytes_out = 0;
  v.busy_time_ms_per_second = v.idle_time_ms_per_second = v.back_pressured_time_ms_per_second = 0;
  v.num_records_in_per_second = v.num_records_out_per_second = 0;
  v.num_bytes_in_per_second = v.num_bytes_out_per_second = 0;
  v.debloated_buffer_size = 0;
  v.estimated_time_to_consume_buffers_ms = 0;
  for (const SubtaskProgress& s : v.subtasks) {
    const runtime::TaskIOMetrics& io = s.io;
    v.in_pool_usage = std::max(v.in_pool_usage, io.in_pool_usage);
    v.out_pool_usage = std::max(v.out_pool_usage, io.out_pool_usage);
    v.num_bytes_in += io.num_bytes_in;
    v.num_bytes_out += io.num_bytes_out;
    v.busy_time_ms_per_second = std::max(v.busy_time_ms_per_second, s.busy_time_ms_per_second);
    v.idle_time_ms_per_second = std::max(v.idle_time_ms_per_second, s.idle_time_ms_per_second);
    v.back_pressured_time_ms_per_second =
        std::max(v.back_pressured_time_ms_per_second, s.back_pressured_time_ms_per_second);
    v.num_records_in_per_second += s.num_records_in_per_second;
    v.num_records_out_per_second += s.num_records_out_per_second;
    v.num_bytes_in_per_second += s.num_bytes_in_per_second;
    v.num_bytes_out_per_second += s.num_bytes_out_per_second;
    if (io.debloated_buffer_size > 0 &&
        (v.debloated_buffer_size == 0 || io.debloated_buffer_size < v.debloated_buffer_size)) {
      v.debloated_buffer_size = io.debloated_buffer_size;
    }
    v.estimated_time_to_consume_buffers_ms =
        std::max(v.estimated_time_to_consume_buffers_ms, io.estimated_time_to_consume_buffers_ms);
  }
}

namespace {

using Json = nlohmann::ordered_json;

// The metrics a vertex and a subtask both report, in one order.
struct SharedMetrics {
  int64_t records_in, records_out;
  double records_in_per_second, records_out_per_second;
  int64_t bytes_in, bytes_out;
  double bytes_in_per_second, bytes_out_per_second;
  double busy, idle, back_pressured;
};

void putShared(Json& m, const SharedMetrics& v) {
  m["numRecordsIn"] = v.records_in;
  m["numRecordsOut"] = v.records_out;
  m["numRecordsInPerSecond"] = v.records_in_per_second;
  m["numRecordsOutPerSecond"] = v.records_out_per_second;
  m["numBytesIn"] = v.bytes_in;
  m["numBytesOut"] = v.bytes_out;
  m["numBytesInPerSecond"] = v.bytes_in_per_second;
  m["numBytesOutPerSecond"] = v.bytes_out_per_second;
  m["busyTimeMsPerSecond"] = v.busy;
  m["idleTimeMsPerSecond"] = v.idle;
  m["backPressuredTimeMsPerSecond"] = v.back_pressured;
}

Json gateJson(const runtime::GateIOMetrics& g) {
  Json j;
  j["channels"] = g.channels;
  j["bufferChannels"] = g.buffer_channels;
  j["inPoolUsage"] = g.in_pool_usage;
  j["queuedBuffers"] = g.queued_buffers;
  j["numBytesIn"] = g.num_bytes_in;
  j["inFlightBytes"] = g.in_flight_bytes;
  j["debloatedBufferSize"] = g.debloated_buffer_size;
  j["estimatedTimeToConsumeBuffersMs"] = g.estimated_time_to_consume_buffers_ms;
  j["bufferSizeAnnouncements"] = g.buffer_size_announcements;
  return j;
}

Json partitionJson(const runtime::PartitionIOMetrics& p) {
  Json j;
  j["subpartitions"] = p.subpartitions;
  j["buffersInUse"] = p.buffers_in_use;
  j["maxBuffers"] = p.max_buffers;
  j["peakBuffersInUse"] = p.peak_buffers_in_use;
  j["numBytesOut"] = p.num_bytes_out;
  j["backPressuredTimeMs"] = p.back_pressured_time_ms;
  return j;
}

Json subtaskJson(const SubtaskProgress& s) {
  const runtime::TaskIOMetrics& io = s.io;
  Json j;
  j["subtask"] = s.subtask;
  j["name"] = s.name;
  j["attempt"] = s.attempt;  // Flink's attemptNumber in /jobs/:id/vertices/:vid subtasks
  Json m;
  putShared(m, {io.num_records_in, io.num_records_out, s.num_records_in_per_second, s.num_records_out_per_second,
                io.num_bytes_in, io.num_bytes_out, s.num_bytes_in_per_second, s.num_bytes_out_per_second,
                s.busy_time_ms_per_second, s.idle_time_ms_per_second, s.back_pressured_time_ms_per_second});
  m["accumulatedBusyTimeMs"] = io.busy_time_ms;
  m["accumulatedIdleTimeMs"] = io.idle_time_ms;
  m["accumulatedBackPressuredTimeMs"] = io.back_pressured_time_ms;
  m["runningTimeMs"] = io.running_time_ms;
  m["inPoolUsage"] = io.in_pool_usage;
  m["outPoolUsage"] = io.out_pool_usage;
  m["debloatedBufferSize"] = io.debloated_buffer_size;
  m["estimatedTimeToConsumeBuffersMs"] = io.estimated_time_to_consume_buffers_ms;
  j["metrics"] = std::move(m);
  Json gates = Json::array();
  for (const runtime::GateIOMetrics& g : io.gates) gates.push_back(gateJson(g));
  j["gates"] = std::move(gates);
  Json partitions = Json::array();
  for (const runtime::PartitionIOMetrics& p : io.partitions) partitions.push_back(partitionJson(p));
  j["partitions"] = std::move(partitions);
  return j;
}

Json jobJson(const JobExecutionResult& r) {
  Json job;
  job["jid"] = r.job_id;
  job["name"] = r.job_name;
  job["state"] = jobStatusName(r.status);
  job["duration"] = r.wall_time_ms;
  job["numRestarts"] = r.num_restarts;
  // Slots the scheduler needed and held at most at once (BATCH: the largest region, FLINK-14060), and the
  // scheduling regions in deployment order.
  Json slots;
  slots["required"] = r.slots_required;
  slots["configured"] = r.slots_configured;
  slots["peak"] = r.slots_peak;
  job["slots"] = std::move(slots);
  Json regions = Json::array();
  for (int id : r.deployed_regions) regions.push_back(id);
  job["deployedRegions"] = std::move(regions);
  if (r.checkpoints) {
    // Flink's job-level checkpoint metrics.
    const runtime::checkpoint::CheckpointStats& c = *r.checkpoints;
    Json cj;
    cj["numberOfCompletedCheckpoints"] = c.number_of_completed_checkpoints;
    cj["numberOfFailedCheckpoints"] = c.number_of_failed_checkpoints;
    cj["numberOfInProgressCheckpoints"] = c.number_of_in_progress_checkpoints;
    cj["lastCheckpointId"] = c.last_checkpoint_id;
    cj["lastCheckpointDuration"] = c.last_checkpoint_duration_ms;
    cj["lastCheckpointSize"] = c.last_checkpoint_size;
    cj["lastCheckpointFullSize"] = c.last_checkpoint_full_size;
    cj["lastCheckpointExternalPath"] = c.last_checkpoint_external_path;
    cj["lastCheckpointAlignmentTimeNanos"] = c.last_checkpoint_max_alignment_ns;
    cj["checkpointStartDelayNanos"] = c.last_checkpoint_max_start_delay_ns;
    // Unaligned checkpoints (FLIP-76): Flink's checkpoint statistics "unaligned_checkpoint" and
    // "persisted_data" ("Processed (persisted) in-flight data"), per subtask as in /checkpoints/details.
    cj["lastCheckpointUnaligned"] = c.last_checkpoint_unaligned;
    cj["lastCheckpointPersistedData"] = c.last_checkpoint_persisted_in_flight_bytes;
    Json subtasks = Json::array();
    for (size_t v = 0; v < c.last_checkpoint_subtasks.size(); ++v) {
      for (size_t s = 0; s < c.last_checkpoint_subtasks[v].size(); ++s) {
        const runtime::checkpoint::CheckpointMetrics& m = c.last_checkpoint_subtasks[v][s];
        Json sj;
        sj["vertex"] = v < r.vertices.size() ? r.vertices[v].name : std::string();
        sj["subtask"] = static_cast<int64_t>(s);
        sj["alignmentDurationNanos"] = m.alignment_duration_ns;
        sj["checkpointStartDelayNanos"] = m.checkpoint_start_delay_ns;
        sj["syncDuration"] = m.sync_duration_ms;
        sj["asyncDuration"] = m.async_duration_ms;
        sj["unalignedCheckpoint"] = m.unaligned;
        sj["persistedData"] = m.persisted_in_flight_bytes;
        subtasks.push_back(std::move(sj));
      }
    }
    cj["lastCheckpointSubtasks"] = std::move(subtasks);
    cj["lastCheckpointSyncDuration"] = c.last_checkpoint_max_sync_duration_ms;
    cj["lastCheckpointAsyncDuration"] = c.last_checkpoint_max_async_duration_ms;
    job["checkpoints"] = std::move(cj);
  }
  Json vertices = Json::array();
  for (const VertexProgress& v : r.vertices) {
    Json vj;
    vj["id"] = v.vertex_id;
    vj["name"] = v.name;
    vj["parallelism"] = v.parallelism;
    Json m;
    putShared(m, {v.records_in, v.records_out, v.num_records_in_per_second, v.num_records_out_per_second,
                  v.num_bytes_in, v.num_bytes_out, v.num_bytes_in_per_second, v.num_bytes_out_per_second,
                  v.busy_time_ms_per_second, v.idle_time_ms_per_second, v.back_pressured_time_ms_per_second});
    m["inPoolUsage"] = v.in_pool_usage;
    m["outPoolUsage"] = v.out_pool_usage;
    m["debloatedBufferSize"] = v.debloated_buffer_size;
    m["estimatedTimeToConsumeBuffersMs"] = v.estimated_time_to_consume_buffers_ms;
    m["numConnectionOutages"] = v.connection_outages;
    m["numLateRecordsDropped"] = v.late_records_dropped;
    // Sorted input (FLIP-327 backlog, BATCH): the head's figures.
    int64_t sorted = 0;
    int64_t spilled = 0;
    int sorting = 0;
    int backlog = 0;
    for (const OperatorProgress& op : v.operators) {
      sorted += op.records_sorted;
      spilled += op.bytes_spilled;
      sorting += op.sorting_subtasks;
      backlog = std::max(backlog, op.backlog_subtasks);
    }
    m["numRecordsSorted"] = sorted;
    m["numBytesSpilled"] = spilled;
    m["sortingSubtasks"] = sorting;
    // FLIP-309 / FLIP-328: subtasks whose source (or watermark assigner) reports backlog now.
    m["backlogSubtasks"] = backlog;
    vj["metrics"] = std::move(m);
    Json subtasks = Json::array();
    for (const SubtaskProgress& s : v.subtasks) subtasks.push_back(subtaskJson(s));
    vj["subtasks"] = std::move(subtasks);
    vertices.push_back(std::move(vj));
  }
  job["vertices"] = std::move(vertices);
  return job;
}

}  // namespace

std::string jobMetricsJson(const JobExecutionResult& result) { return jobJson(result).dump(2); }

std::string metricsDocumentJson(const std::vector<JobExecutionResult>& results) {
  Json jobs = Json::array();
  for (const JobExecutionResult& r : results) jobs.push_back(jobJson(r));
  Json doc;
  doc["jobs"] = std::move(jobs);
  return doc.dump(2) + "\n";
}

}  // namespace sluice::cluster

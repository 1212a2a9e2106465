#pragma once
// The cluster side of a CheckpointCoordinator under a hand-moved clock (Hooks::clock + awaitClockTick),
// shared by the coordinator tests that check exact trigger times: a two-vertex job, the hooks that record
// every checkpoint started with the clock time it started at, and helpers that move the clock and
// acknowledge.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graph/job_graph.h"
#include "runtime/checkpoint/checkpoint_coordinator.h"

namespace sluice::runtime::checkpoint::testing {

// src (p=2) -> snk (p=1).
inline graph::JobGraph job() {
  graph::JobGraph g;
  g.job_id = "0123456789abcdef0123456789abcdef";
  graph::JobVertex source;
  source.name = "Source";
  source.parallelism = 2;
  source.is_source = true;
  source.operators.push_back(graph::ChainedOperator{});
  source.operators[0].uid = "src";
  source.outputs = {0};
  graph::JobVertex sink;
  sink.name = "Sink";
  sink.parallelism = 1;
  sink.operators.push_back(graph::ChainedOperator{});
  sink.operators[0].uid = "snk";
  sink.inputs = {0};
  g.vertices = {source, sink};
  graph::JobEdge e;
  e.source_vertex = 0;
  e.target_vertex = 1;
  g.edges = {e};
  return g;
}

// Plays the cluster: a manual clock, and every checkpoint the coordinator starts with the time it started.
struct Cluster {
  std::atomic<int64_t> now_ms{0};
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> started;  // (id, clock ms), once per checkpoint
  std::vector<int64_t> completed;

  CheckpointCoordinator::Hooks hooks() {
    CheckpointCoordinator::Hooks h;
    h.trigger_task = [this](int v, int s, const CheckpointBarrier& b) {
      std::lock_guard<std::mutex> lock(mu);
      if (v == 0 && s == 0) started.emplace_back(b.id, now_ms.load());
    };
    h.notify_complete = [this](int64_t id) {
      std::lock_guard<std::mutex> lock(mu);
      completed.push_back(id);
    };
    h.store = [](const CompletedCheckpoint&, const std::string&) { return std::string(); };
    h.fail_job = [](const std::string&) {};
    h.clock = [this] { return std::chrono::steady_clock::time_point{} + std::chrono::milliseconds(now_ms.load()); };
    return h;
  }
  std::vector<std::pair<int64_t, int64_t>> startedSoFar() {
    std::lock_guard<std::mutex> lock(mu);
    return started;
  }
};

// Moves the clock to each of `times` (ms) in turn and lets the coordinator act on it.
inline void tickThrough(Cluster& cluster, CheckpointCoordinator& c, std::initializer_list<int64_t> times) {
  for (int64_t t : times) {
    cluster.now_ms = t;
    c.awaitClockTick();
  }
}

// Every task acknowledges checkpoint `id`; returns once it completed.
inline void acknowledgeAll(CheckpointCoordinator& c, int64_t id) {
  c.acknowledgeCheckpoint(0, 0, id, {}, {});
  c.acknowledgeCheckpoint(0, 1, id, {}, {});
  c.acknowledgeCheckpoint(1, 0, id, {}, {});
  c.awaitCheckpoint(id, std::chrono::seconds(10));
}

}  // namespace sluice::runtime::checkpoint::testing

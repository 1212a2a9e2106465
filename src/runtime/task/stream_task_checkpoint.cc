// StreamTask's barrier handling: aligned, at-least-once and unaligned checkpoints (FLIP-76), the
// aligned-checkpoint timeout, and the replay of restored channel state.

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "runtime/checkpoint/channel_state_assignment.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/task/sorting_backlog_data_input.h"
#include "runtime/task/stream_task.h"

namespace sluice::runtime {

namespace {

int64_t steadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t wallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void StreamTask::processBarrier(const InputGate::Entry& entry) {
  const CheckpointBarrier& barrier = std::get<CheckpointBarrier>(entry.element);
  const bool current = pending_barrier_ && barrier.id == pending_barrier_->id;
  // Obsolete: its checkpoint was taken or given up here (an unaligned one is taken at its first barrier
  // but still pending until every channel delivered it).
  if (!current && barrier.id <= last_checkpoint_id_) return;
  const auto ch = static_cast<size_t>(entry.channel);
  if (pending_barrier_ && barrier.id > pending_barrier_->id) {
    // A newer checkpoint overtook the one being aligned (Flink: CHECKPOINT_DECLINED_SUBSUMED).
    if (setup_.checkpoint_responder != nullptr) {
      setup_.checkpoint_responder->declineCheckpoint(setup_.vertex_index, setup_.subtask_index, pending_barrier_->id,
                                                     "a newer checkpoint barrier arrived before alignment finished");
    }
    abortPendingCheckpoint();
  }
  bool timed_out = false;
  if (!pending_barrier_) {
    pending_barrier_ = barrier;
    barrier_seen_.assign(channel_ended_.size(), 0);
    barriers_seen_ = 0;
    alignment_start_ns_ = steadyNanos();
    alignment_deadline_.reset();
    if (barrier.alignment == checkpoint::AlignmentType::kAligned && barrier.aligned_timeout_ms > 0) {
      // Flink's aligned-checkpoint timeout counts from the trigger (the checkpoint start delay).
      const int64_t left_ms = barrier.timestamp_ms + barrier.aligned_timeout_ms - wallMillis();
      if (left_ms <= 0) timed_out = true;
      else alignment_deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(left_ms);
    }
  }
  if (!barrier_seen_[ch]) {
    barrier_seen_[ch] = 1;
    ++barriers_seen_;
    if (unaligned_) {
      recording_[ch] = 0;
    } else if (barrier.alignment == checkpoint::AlignmentType::kAligned ||
               barrier.alignment == checkpoint::AlignmentType::kForcedAligned) {
      setup_.input_gate->setChannelBlocked(entry.channel, true);
    }
  }
  // One unaligned barrier makes the whole checkpoint unaligned here (Flink's alternating handler).
  if (!unaligned_ && (timed_out || barrier.alignment == checkpoint::AlignmentType::kUnaligned)) startUnaligned();
  if (unaligned_) {
    if (entry.mid_record) one_more_[ch] = 1;
    checkChannelStateComplete();
  } else {
    checkAlignmentComplete();
  }
}

void StreamTask::checkAlignmentComplete() {
  int waiting = 0;
  for (size_t c = 0; c < channel_ended_.size(); ++c) {
    if (!channel_ended_[c] && !barrier_seen_[c]) ++waiting;
  }
  if (waiting > 0) return;
  const CheckpointBarrier barrier = *pending_barrier_;
  pending_barrier_.reset();
  alignment_deadline_.reset();
  performCheckpoint(barrier);
  resumeBlockedChannels();
}

void StreamTask::resumeBlockedChannels() {
  for (size_t c = 0; c < barrier_seen_.size(); ++c) {
    if (barrier_seen_[c]) setup_.input_gate->setChannelBlocked(static_cast<int>(c), false);
  }
  barrier_seen_.assign(barrier_seen_.size(), 0);
  barriers_seen_ = 0;
}

void StreamTask::abortPendingCheckpoint() {
  if (unaligned_) {
    unaligned_ = false;
    barrier_seen_.assign(barrier_seen_.size(), 0);
    barriers_seen_ = 0;
    unaligned_state_.clear();
    unaligned_channel_ = {};
  } else {
    resumeBlockedChannels();
  }
  alignment_deadline_.reset();
  pending_barrier_.reset();
}

CheckpointBarrier StreamTask::outputBarrier(const CheckpointBarrier& barrier, size_t k) const {
  CheckpointBarrier out = barrier;
  using checkpoint::AlignmentType;
  if (barrier.alignment == AlignmentType::kAtLeastOnce) return out;
  if (!checkpoint::supportsUnalignedCheckpoints(*setup_.job, vertex_->outputs[k])) {
    // Flink's withUnalignedUnsupported: FORWARD/RESCALE/BROADCAST consumers always align.
    if (barrier.alignment == AlignmentType::kUnaligned || barrier.aligned_timeout_ms > 0) {
      out.alignment = AlignmentType::kForcedAligned;
    }
  } else if (barrier.alignment == AlignmentType::kForcedAligned) {
    // withUnalignedSupported: the checkpoint's own alignment again.
    out.alignment = barrier.aligned_timeout_ms > 0 ? AlignmentType::kAligned : AlignmentType::kUnaligned;
  }
  return out;
}

AsyncCheckpointRunner::Futures StreamTask::takeSnapshot(const CheckpointBarrier& barrier,
                                                       checkpoint::CheckpointMetrics& metrics,
                                                       checkpoint::SubtaskChannelState& channel) {
  last_checkpoint_id_ = barrier.id;
  const int64_t start = steadyNanos();
  metrics.checkpoint_start_delay_ns = std::max<int64_t>(0, wallMillis() - barrier.timestamp_ms) * 1000000;
  chain_->prepareSnapshotPreBarrier(barrier.id);
  metrics.unaligned = barrier.alignment == checkpoint::AlignmentType::kUnaligned;
  std::vector<std::string> overtaken;
  for (size_t k = 0; k < writers_.size(); ++k) {
    const CheckpointBarrier out = outputBarrier(barrier, k);
    if (out.alignment != checkpoint::AlignmentType::kUnaligned) {
      writers_[k]->broadcastCheckpointBarrier(out);
      continue;
    }
    writers_[k]->broadcastUnalignedBarrier(out, overtaken);
    for (size_t t = 0; t < overtaken.size(); ++t) {
      if (overtaken[t].empty()) continue;
      channel.output.push_back(checkpoint::OutputChannelStateEntry{
          static_cast<int32_t>(k), static_cast<int32_t>(writers_[k]->consumerOf(t)), std::move(overtaken[t])});
    }
  }
  // The synchronous part; the write-out and the acknowledgement run on the task's async thread.
  AsyncCheckpointRunner::Futures futures =
      chain_->snapshotStateAsync(barrier.id, checkpoint::isSavepoint(barrier.kind));
  metrics.sync_duration_ms = (steadyNanos() - start) / 1000000;
  return futures;
}

void StreamTask::submitAsyncPart(int64_t id, AsyncCheckpointRunner::Futures futures,
                                 const checkpoint::CheckpointMetrics& metrics,
                                 std::optional<checkpoint::SubtaskChannelState> channel) {
  if (setup_.checkpoint_responder == nullptr) return;
  if (!async_checkpoints_) {
    async_checkpoints_ = std::make_unique<AsyncCheckpointRunner>(setup_.checkpoint_responder, setup_.vertex_index,
                                                                 setup_.subtask_index);
  }
  std::optional<AsyncCheckpointRunner::HeadChannelState> head_channel;
  if (channel) {
    // The head's entry is there even without channel state: a restore checks its parallelism.
    const graph::ChainedOperator& head = vertex_->operators[0];
    head_channel = AsyncCheckpointRunner::HeadChannelState{head.uid.empty() ? head.name : head.uid, std::move(*channel)};
  }
  async_checkpoints_->submit(id, std::move(futures), metrics, std::move(head_channel));
}

void StreamTask::performCheckpoint(const CheckpointBarrier& barrier) {
  if (sorted_input_ && sorted_input_->sorting()) {
    // FLIP-327: no snapshot while the input is sorted (its records are in the sorter, not in state).
    // The barrier still goes on so no consumer waits for it in an alignment; the checkpoint is declined.
    last_checkpoint_id_ = barrier.id;
    for (size_t k = 0; k < writers_.size(); ++k) writers_[k]->broadcastCheckpointBarrier(outputBarrier(barrier, k));
    if (setup_.checkpoint_responder != nullptr) {
      setup_.checkpoint_responder->declineCheckpoint(setup_.vertex_index, setup_.subtask_index, barrier.id,
                                                     checkpoint::kDeclinedDuringBacklog);
    }
    return;
  }
  if (checkpoint::isStopSavepoint(barrier.kind)) {
    // Flink's stop-with-savepoint --drain: the sources' final watermark goes before the barrier, so every
    // event-time window fires into the savepoint.
    if (vertex_->is_source && barrier.kind == checkpoint::CheckpointKind::kSavepointTerminate) {
      chain_->emitFinalWatermark();
    }
    stop_savepoint_id_ = barrier.id;
    stop_kind_ = barrier.kind;
    stop_completed_ = false;
  }
  checkpoint::CheckpointMetrics metrics;
  if (!vertex_->is_source && alignment_start_ns_ > 0) metrics.alignment_duration_ns = steadyNanos() - alignment_start_ns_;
  alignment_start_ns_ = 0;
  checkpoint::SubtaskChannelState channel;
  AsyncCheckpointRunner::Futures futures = takeSnapshot(barrier, metrics, channel);
  std::optional<checkpoint::SubtaskChannelState> head_channel;
  if (metrics.unaligned || !channel.empty()) {
    // An aligned snapshot may still have sent unaligned barriers (after FORWARD/RESCALE/BROADCAST inputs).
    metrics.persisted_in_flight_bytes = channel.bytes();
    head_channel = std::move(channel);
  }
  submitAsyncPart(barrier.id, std::move(futures), metrics, std::move(head_channel));
}

void StreamTask::startUnaligned() {
  SLUICE_CHECK(pending_barrier_.has_value(), "task '{}': unaligned switch without a pending checkpoint", name_);
  unaligned_ = true;
  alignment_deadline_.reset();
  // Nothing stays blocked: the channels that delivered the barrier carry data after it from now on.
  for (size_t c = 0; c < barrier_seen_.size(); ++c) {
    if (barrier_seen_[c]) setup_.input_gate->setChannelBlocked(static_cast<int>(c), false);
  }
  const size_t n = channel_ended_.size();
  recording_.assign(n, 0);
  one_more_.assign(n, 0);
  input_state_.assign(n, std::string());
  for (size_t c = 0; c < n; ++c) recording_[c] = !channel_ended_[c] && !barrier_seen_[c] ? 1 : 0;
  CheckpointBarrier forward = *pending_barrier_;
  forward.alignment = checkpoint::AlignmentType::kUnaligned;
  unaligned_metrics_ = {};
  unaligned_channel_ = {};
  unaligned_state_ = takeSnapshot(forward, unaligned_metrics_, unaligned_channel_);
}

void StreamTask::checkChannelStateComplete() {
  if (!unaligned_) return;
  for (size_t c = 0; c < channel_ended_.size(); ++c) {
    if ((!channel_ended_[c] && !barrier_seen_[c]) || one_more_[c]) return;
  }
  const int64_t id = pending_barrier_->id;
  for (size_t c = 0; c < input_state_.size(); ++c) {
    if (input_state_[c].empty()) continue;
    unaligned_channel_.input.push_back(checkpoint::InputChannelStateEntry{
        channel_origin_[c].first, channel_origin_[c].second, std::move(input_state_[c])});
  }
  checkpoint::CheckpointMetrics metrics = unaligned_metrics_;
  metrics.alignment_duration_ns = steadyNanos() - alignment_start_ns_;
  metrics.persisted_in_flight_bytes = unaligned_channel_.bytes();
  // The operators' state was frozen at the first barrier (startUnaligned); its write-out starts now, with
  // the channel state recorded since on the task thread going into the same acknowledgement.
  AsyncCheckpointRunner::Futures futures = std::move(unaligned_state_);
  checkpoint::SubtaskChannelState channel = std::move(unaligned_channel_);
  unaligned_ = false;
  unaligned_state_.clear();
  unaligned_channel_ = {};
  input_state_.clear();
  recording_.clear();
  one_more_.clear();
  barrier_seen_.assign(barrier_seen_.size(), 0);
  barriers_seen_ = 0;
  alignment_start_ns_ = 0;
  pending_barrier_.reset();
  submitAsyncPart(id, std::move(futures), metrics, std::move(channel));
}

void StreamTask::computeChannelOrigins() {
  channel_origin_.clear();
  channel_objects_.clear();
  // The cluster's gate layout: the head's input edges in order, per edge its connected producers ascending.
  for (size_t k = 0; k < vertex_->inputs.size(); ++k) {
    const int e = vertex_->inputs[k];
    const graph::JobEdge& edge = setup_.job->edges[static_cast<size_t>(e)];
    const std::vector<int> producers = graph::connectedProducers(
        edge.partitioner.strategy, setup_.job->vertices[static_cast<size_t>(edge.source_vertex)].parallelism,
        vertex_->parallelism, setup_.subtask_index);
    const std::shared_ptr<const ObjectBatchSerializer> objects = network::edgeRecordSerializer(*setup_.job, e);
    for (int p : producers) {
      channel_origin_.emplace_back(static_cast<int>(k), p);
      channel_objects_.push_back(objects);
    }
  }
  SLUICE_CHECK(static_cast<int>(channel_origin_.size()) == setup_.input_gate->numChannels(),
               "task '{}': {} channels by edge layout, gate has {}", name_, channel_origin_.size(),
               setup_.input_gate->numChannels());
}

void StreamTask::replayChannelState() {
  if (setup_.replay == nullptr) return;
  const ChannelReplay& replay = *setup_.replay;
  bool any = false;
  for (size_t k = 0; k < writers_.size(); ++k) {
    RecordWriter& w = *writers_[k];
    const int edge = vertex_->outputs[k];
    const std::shared_ptr<const ObjectBatchSerializer> objects = network::edgeRecordSerializer(*setup_.job, edge);
    const auto replayBytes = [&](const std::string& bytes, const std::string& where, auto&& send) {
      if (bytes.empty()) return;
      any = true;
      try {
        network::forEachChannelStateRecord(bytes, objects.get(), send);
      } catch (const InputError& e) {
        throw InputError(fmt::format("task '{}': restored channel state of output {} {}: {}", name_, k, where, e.what()));
      }
    };
    if (k < replay.channels.size()) {
      for (size_t t = 0; t < replay.channels[k].size() && t < w.numTargets(); ++t) {
        replayBytes(replay.channels[k][t], fmt::format("to subtask {}", w.consumerOf(t)),
                    [&](StreamElement&& e) { w.replayRecord(t, std::move(e)); });
      }
    }
    // A rescaled edge: the partitioner picks the new channel of every record.
    if (k < replay.rerouted.size()) {
      replayBytes(replay.rerouted[k], "(rescaled)", [&](StreamElement&& e) {
        if (auto* rows = std::get_if<types::RowBatch>(&e)) w.emit(std::move(*rows));
        else if (auto* batch = std::get_if<ObjectBatchPtr>(&e)) w.emitObjects(std::move(*batch));
      });
    }
  }
  if (any) {
    for (auto& w : writers_) w->flush();
  }
}

}  // namespace sluice::runtime

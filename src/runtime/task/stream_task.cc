#include "runtime/task/stream_task.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/config.h"
#include "common/error.h"
#include "runtime/network/input_channel.h"
#include "runtime/operators/keyed_input_sorter.h"
#include "runtime/sort/external_sorter.h"
#include "runtime/task/operator_chain.h"
#include "runtime/task/sorting_backlog_data_input.h"
#include "runtime/task/task_cancellation.h"
#include "runtime/task/watermark_valve.h"

namespace sluice::runtime {

StreamTask::StreamTask(StreamTaskSetup setup) : setup_(std::move(setup)) {
  SLUICE_CHECK(setup_.job != nullptr && setup_.config != nullptr, "incomplete StreamTaskSetup");
  vertex_ = &setup_.job->vertices[static_cast<size_t>(setup_.vertex_index)];
  name_ = fmt::format("{} ({}/{})", vertex_->name, setup_.subtask_index + 1, vertex_->parallelism);
  SLUICE_CHECK(vertex_->is_source == (setup_.input_gate == nullptr), "task '{}': input gate does not match vertex",
               name_);
  SLUICE_CHECK(setup_.partitions.size() == vertex_->outputs.size(), "task '{}': {} partitions for {} out edges",
               name_, setup_.partitions.size(), vertex_->outputs.size());
  metrics_ = std::make_unique<OperatorMetrics[]>(vertex_->operators.size());

  const int32_t batch_size = setup_.config->get(options::kBatchSize);
  if (batch_size < 1) {
    throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': must be at least 1", batch_size,
                                  options::kBatchSize.key()));
  }
  batch_size_ = static_cast<size_t>(batch_size);
  buffer_timeout_ms_ = setup_.config->get(options::kBufferTimeout);
  const bool coalesce = buffer_timeout_ms_ != 0;
  for (size_t k = 0; k < setup_.partitions.size(); ++k) {
    const graph::JobEdge& edge = setup_.job->edges[static_cast<size_t>(vertex_->outputs[k])];
    writers_.push_back(std::make_unique<RecordWriter>(std::move(setup_.partitions[k]), edge.partitioner,
                                                      setup_.subtask_index, batch_size_, coalesce));
  }
  setup_.partitions.clear();
  debloat_config_ = network::BufferDebloatConfiguration::fromConfiguration(*setup_.config);
  buffers_per_channel_ = std::max<int32_t>(1, setup_.config->get(options::kNetworkBuffersPerChannel));
  if (setup_.input_gate != nullptr) {
    InputGate* gate = setup_.input_gate;
    mailbox_.setWakeupHook([gate] { gate->wakeup(); });
  }
}

StreamTask::~StreamTask() = default;

int64_t StreamTask::networkRecordsOut() const {
  int64_t n = 0;
  for (const auto& w : writers_) n += w->recordsOut();
  return n;
}

namespace {

int64_t steadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void StreamTask::beginIdle() {
  const int64_t now = steadyNanos();
  std::lock_guard<std::mutex> lock(idle_mu_);
  idle_since_ns_ = now;
}

void StreamTask::endIdle() {
  const int64_t now = steadyNanos();
  std::lock_guard<std::mutex> lock(idle_mu_);
  if (idle_since_ns_ > 0) idle_ns_ += now - idle_since_ns_;
  idle_since_ns_ = 0;
}

TaskIOMetrics StreamTask::ioMetrics() const {
  TaskIOMetrics m;
  int64_t pool_in_use = 0;
  int64_t pool_max = 0;
  int64_t back_pressured_ns = 0;
  for (const auto& w : writers_) {
    const ResultPartition& p = w->partition();
    PartitionIOMetrics pm;
    pm.subpartitions = static_cast<int>(p.subpartitions.size());
    pm.num_bytes_out = p.bytesOut();
    const int64_t ns = p.backPressuredNanos();
    back_pressured_ns += ns;
    pm.back_pressured_time_ms = ns / 1000000;
    if (p.pool) {
      pm.buffers_in_use = p.pool->buffersInUse();
      pm.max_buffers = p.pool->maxBuffers();
      pm.peak_buffers_in_use = p.pool->peakBuffersInUse();
      m.is_back_pressured = m.is_back_pressured || p.pool->hasWaitingRequester() ||
                            waiting_for_output_.load(std::memory_order_relaxed);
    }
    pool_in_use += pm.buffers_in_use;
    pool_max += pm.max_buffers;
    m.num_bytes_out += pm.num_bytes_out;
    m.partitions.push_back(pm);
  }
  if (pool_max > 0) m.out_pool_usage = std::min(1.0, static_cast<double>(pool_in_use) / static_cast<double>(pool_max));
  if (const InputGate* gate = setup_.input_gate) {
    GateIOMetrics g;
    g.channels = gate->numChannels();
    g.num_bytes_in = gate->bytesIn();
    for (const auto& channel : gate->inputChannels()) g.in_flight_bytes += channel->queuedBytes();
    g.buffer_channels = static_cast<int>(gate->inputChannels().size());
    g.queued_buffers = gate->queuedBuffers();
    if (g.buffer_channels > 0) {
      const double credit = static_cast<double>(g.buffer_channels) * buffers_per_channel_;
      g.in_pool_usage = std::min(1.0, g.queued_buffers / credit);
    }
    g.debloated_buffer_size = debloated_buffer_size_.load(std::memory_order_relaxed);
    g.estimated_time_to_consume_buffers_ms = estimated_time_to_consume_ms_.load(std::memory_order_relaxed);
    g.buffer_size_announcements = buffer_size_announcements_.load(std::memory_order_relaxed);
    m.num_bytes_in = g.num_bytes_in;
    m.in_pool_usage = g.in_pool_usage;
    m.debloated_buffer_size = g.debloated_buffer_size;
    m.estimated_time_to_consume_buffers_ms = g.estimated_time_to_consume_buffers_ms;
    m.gates.push_back(g);
  }
  m.num_records_in = vertex_->operators.empty() ? 0 : metrics_[0].num_records_in.load(std::memory_order_relaxed);
  m.num_records_out = networkRecordsOut();

  // Times: idle and back-pressured waits are disjoint (both on the task thread); busy is the rest.
  const int64_t start = start_ns_.load(std::memory_order_acquire);
  if (start > 0) {
    const int64_t end = end_ns_.load(std::memory_order_acquire);
    m.running = end == 0;
    int64_t now;
    int64_t idle;
    {
      // One lock for both fields: a wait that ends meanwhile is counted exactly once.
      std::lock_guard<std::mutex> lock(idle_mu_);
      now = m.running ? steadyNanos() : end;
      idle = idle_ns_;
      if (m.running && idle_since_ns_ > 0 && idle_since_ns_ < now) idle += now - idle_since_ns_;
    }
    const int64_t running_ns = std::max<int64_t>(0, now - start);
    m.running_time_ms = running_ns / 1000000;
    m.idle_time_ms = std::min(idle, running_ns) / 1000000;
    m.back_pressured_time_ms = std::min(back_pressured_ns, running_ns - std::min(idle, running_ns)) / 1000000;
    m.busy_time_ms = std::max<int64_t>(0, m.running_time_ms - m.idle_time_ms - m.back_pressured_time_ms);
  }
  return m;
}

void StreamTask::cancel() {
  cancelled_.store(true, std::memory_order_relaxed);
  if (setup_.input_gate != nullptr) setup_.input_gate->cancel();
  mailbox_.put([] {});  // wakes a source task waiting for mail
}

void StreamTask::invoke() {
  start_ns_.store(steadyNanos(), std::memory_order_release);
  struct EndTime {
    StreamTask* task;
    ~EndTime() {
      task->endIdle();
      task->end_ns_.store(steadyNanos(), std::memory_order_release);
    }
  } end_time{this};
  // Long operator loops on this thread see cancel() through throwIfTaskCancelled().
  const TaskCancellationScope cancellation(&cancelled_);
  try {
    OperatorContext base;
    base.subtask_index = setup_.subtask_index;
    base.parallelism = vertex_->parallelism;
    base.max_parallelism = vertex_->max_parallelism;
    base.task_name = name_;
    base.config = setup_.config;
    base.processing_time_service = &timers_;
    base.checkpointing = setup_.checkpoint_responder != nullptr && setup_.periodic_checkpointing;
    base.backlog_listener = setup_.checkpoint_responder;
    std::vector<RecordWriter*> writers;
    for (auto& w : writers_) writers.push_back(w.get());
    chain_ = std::make_unique<OperatorChain>(*vertex_, std::move(writers), base, metrics_.get(), setup_.job,
                                             setup_.restore, &setup_.failure);
    throwIfCancelled();
    chain_->open();
    replayChannelState();
    if (vertex_->is_source) runSource();
    else runInput();
    endOfInput();
    if (async_checkpoints_) async_checkpoints_->drain();
    if (sorted_input_) sorted_input_->close();
    sorted_input_.reset();
    chain_->close(false);
    chain_.reset();
  } catch (...) {
    if (async_checkpoints_) async_checkpoints_->cancel();
    if (sorted_input_) {
      try {
        sorted_input_->close();
      } catch (...) {  // the failure in flight is the one to report
      }
      sorted_input_.reset();
    }
    if (chain_) {
      chain_->close(true);
      chain_.reset();
    }
    throw;
  }
}

void StreamTask::runSource() {
  SourceOperator* source = chain_->sourceHead();
  while (true) {
    if (mailbox_.hasMail()) mailbox_.runAll();
    throwIfCancelled();
    if (stop_savepoint_id_) {
      // Stop-with-savepoint (Flink's synchronous savepoint): nothing after the barrier; end once it completed,
      // emit again if it was aborted.
      if (stop_completed_) break;
      flushAll();
      mailbox_.waitForMail(std::chrono::milliseconds(10));
      continue;
    }
    if (!timers_.empty()) fireTimers();
    if (!outputsAvailable(0)) {
      // Flink's mailbox: no record while an output has no buffer, but mail (a checkpoint trigger) still runs,
      // so a back pressured source takes its checkpoint (its barrier needs no buffer when unaligned).
      // Partly filled buffers go to the consumers first: they may hold the pool's last segments.
      flushAll();
      if (outputsAvailable(0)) continue;
      const int64_t start = steadyNanos();
      waiting_for_output_.store(true, std::memory_order_relaxed);
      mailbox_.waitForMail(std::chrono::milliseconds(1));
      waiting_for_output_.store(false, std::memory_order_relaxed);
      outputsAvailable(steadyNanos() - start);
      continue;
    }
    const InputStatus status = source->emitNext();
    if (status == InputStatus::kEndOfInput) break;
    if (status == InputStatus::kNothingAvailable) {
      // An idle source flushes at once so slow inputs keep a low latency, then waits briefly for mail.
      flushAll();
      beginIdle();
      mailbox_.waitForMail(std::chrono::milliseconds(1));
      endIdle();
    } else {
      checkFlush();
    }
  }
  // Flink's final watermark: every event-time window fires before the end. Not when stopped without
  // --drain (the windows are in the savepoint); with it, the watermark went out before the barrier.
  if (!stop_savepoint_id_) chain_->emitFinalWatermark();
}

bool StreamTask::outputsAvailable(int64_t waited_ns) const {
  for (const auto& w : writers_) {
    if (!w->partition().isAvailable(waited_ns)) return false;
  }
  return true;
}

void StreamTask::runInput() {
  InputGate* gate = setup_.input_gate;
  const int channels = gate->numChannels();
  SLUICE_CHECK(channels > 0, "task '{}' has an input gate without channels", name_);
  valve_ = std::make_unique<StatusWatermarkValve>(channels);
  channel_ended_.assign(static_cast<size_t>(channels), 0);
  computeChannelInputs();
  setUpAttributeCombiners(channels);
  if (setup_.checkpoint_responder != nullptr) computeChannelOrigins();
  createSortedInput();
  while (channels_ended_ < channels) {
    if (mailbox_.hasMail()) mailbox_.runAll();
    throwIfCancelled();
    if (sorted_input_ && sorted_input_->flushing()) {
      // FLUSHING_BACKLOG: no input is read and no timer fires until the sorted records are through;
      // mail still runs between two batches.
      sorted_input_->flushNext();
      checkFlush();
      continue;
    }
    if (!inbox_.empty()) {
      // What a poll brought after the element that started a flush.
      dispatchInbox();
      continue;
    }
    auto deadline = checkFlush();
    if (alignment_deadline_) {
      // Aligned-checkpoint timeout (Flink's AlternatingCheckpointBarrierHandler timer): switch to unaligned.
      if (std::chrono::steady_clock::now() >= *alignment_deadline_) {
        startUnaligned();
        checkChannelStateComplete();
      } else if (!deadline || *alignment_deadline_ < *deadline) {
        deadline = alignment_deadline_;
      }
    }
    if (debloat_config_.enabled && !gate->inputChannels().empty()) {
      const auto debloat_deadline = checkDebloat();
      if (!deadline || *debloat_deadline < *deadline) deadline = debloat_deadline;
    }
    if (!timers_.empty()) {
      const auto timer_deadline = fireTimers();
      if (timer_deadline && (!deadline || *timer_deadline < *deadline)) deadline = timer_deadline;
    }
    // A look without waiting first: only a wait with nothing to read is idle time.
    const auto now = std::chrono::steady_clock::now();
    InputGate::PollResult r = gate->pollAll(inbox_, now);
    if (r == InputGate::PollResult::kTimeout && (!deadline || *deadline > now)) {
      beginIdle();
      r = gate->pollAll(inbox_, deadline);
      endIdle();
    }
    if (r == InputGate::PollResult::kCancelled) throw CancelTaskException();
    if (r != InputGate::PollResult::kData) continue;
    dispatchInbox();
  }
}

void StreamTask::dispatchInbox() {
  const bool debloat = debloat_config_.enabled && debloat_deadline_.has_value();
  while (!inbox_.empty()) {
    dispatch(inbox_.front());
    inbox_.pop_front();
    // A slow operator may take long over one poll's elements: keep the debloat period between them
    // (Flink runs it as a mail between records), so the size follows the throughput on time.
    if (debloat && std::chrono::steady_clock::now() >= *debloat_deadline_) checkDebloat();
    // A flush of the sorted backlog runs before the next element (FLUSHING_BACKLOG reads no input).
    if (sorted_input_ && sorted_input_->flushing()) return;
  }
}

void StreamTask::dispatch(InputGate::Entry& entry) {
  if (unaligned_) {
    const auto c = static_cast<size_t>(entry.channel);
    if ((recording_[c] || one_more_[c]) &&
        (std::holds_alternative<types::RowBatch>(entry.element) || std::holds_alternative<ObjectBatchPtr>(entry.element))) {
      // Processed after the snapshot but before this channel's barrier: in-flight data of the checkpoint.
      network::appendChannelStateRecord(entry.element, channel_objects_[c].get(), input_state_[c]);
      if (one_more_[c]) {
        one_more_[c] = 0;
        checkChannelStateComplete();
      }
    }
  }
  if (auto* batch = std::get_if<types::RowBatch>(&entry.element)) {
    if (!batch->empty()) {
      const int input = channel_input_.empty() ? 0 : channel_input_[static_cast<size_t>(entry.channel)];
      if (sorted_input_) sorted_input_->processBatch(std::move(*batch), input);
      else if (input == 0) chain_->processBatch(std::move(*batch));
      else chain_->processBatch2(std::move(*batch));
    }
  } else if (auto* objects = std::get_if<ObjectBatchPtr>(&entry.element)) {
    if (*objects && !(*objects)->empty()) {
      const int input = channel_input_.empty() ? 0 : channel_input_[static_cast<size_t>(entry.channel)];
      if (sorted_input_) sorted_input_->processObjects(std::move(*objects), input);
      else if (input == 0) chain_->processObjects(std::move(*objects));
      else chain_->processObjects2(std::move(*objects));
    }
  } else if (const auto* mark = std::get_if<Watermark>(&entry.element)) {
    if (auto wm = valve_->inputWatermark(entry.channel, mark->timestamp)) headWatermark(Watermark{*wm});
  } else if (const auto* status = std::get_if<WatermarkStatus>(&entry.element)) {
    emitValveOutput(valve_->inputWatermarkStatus(entry.channel, *status));
  } else if (const auto* attributes = std::get_if<RecordAttributes>(&entry.element)) {
    const size_t c = static_cast<size_t>(entry.channel);
    const int input = channel_input_.empty() ? 0 : channel_input_[c];
    if (auto combined = attribute_combiners_[static_cast<size_t>(input)].inputRecordAttributes(channel_in_input_[c],
                                                                                              *attributes)) {
      headRecordAttributes(*combined, channel_input_.empty() ? 0 : input + 1);
    }
  } else if (std::holds_alternative<CheckpointBarrier>(entry.element)) {
    processBarrier(entry);
  } else {
    char& ended = channel_ended_[static_cast<size_t>(entry.channel)];
    if (ended) return;
    ended = 1;
    ++channels_ended_;
    emitValveOutput(valve_->endOfInput(entry.channel));
    {
      const size_t c = static_cast<size_t>(entry.channel);
      const int input = channel_input_.empty() ? 0 : channel_input_[c];
      if (auto combined = attribute_combiners_[static_cast<size_t>(input)].endOfInput(channel_in_input_[c])) {
        headRecordAttributes(*combined, channel_input_.empty() ? 0 : input + 1);
      }
    }
    if (pending_barrier_) {
      if (unaligned_) checkChannelStateComplete();
      else checkAlignmentComplete();
    }
    if (channels_ended_ == static_cast<int>(channel_ended_.size()) && deferred_trigger_) {
      const CheckpointBarrier deferred = *deferred_trigger_;
      deferred_trigger_.reset();
      if (deferred.id > last_checkpoint_id_) performCheckpoint(deferred);
    }
  }
}

void StreamTask::triggerCheckpoint(const CheckpointBarrier& barrier) {
  mailbox_.put([this, barrier] {
    if (chain_ == nullptr || barrier.id <= last_checkpoint_id_) return;
    // A task with inputs is triggered once all its producers finished (FLIP-147); the end of partition of
    // some may still be in its channels: it takes the checkpoint when the last one has been read.
    if (!vertex_->is_source && (channel_ended_.empty() || channels_ended_ < static_cast<int>(channel_ended_.size()))) {
      if (!deferred_trigger_ || deferred_trigger_->id < barrier.id) deferred_trigger_ = barrier;
      return;
    }
    performCheckpoint(barrier);
  });
}

void StreamTask::notifyCheckpointComplete(int64_t id) {
  mailbox_.put([this, id] {
    if (chain_ == nullptr) return;
    // Only checkpoints this task took part in: a completion that overtook this task's barrier (its
    // notification raced ahead of the mail that snapshots) is not one.
    if (id <= last_checkpoint_id_) last_completed_checkpoint_id_ = std::max(last_completed_checkpoint_id_, id);
    if (stop_savepoint_id_ && *stop_savepoint_id_ == id) stop_completed_ = true;
    chain_->notifyCheckpointComplete(id);
  });
}

void StreamTask::notifyCheckpointAborted(int64_t id) {
  mailbox_.put([this, id] {
    if (async_checkpoints_) async_checkpoints_->abort(id);
    // A failed stop savepoint: the job keeps running (Flink), the source emits again.
    if (stop_savepoint_id_ && *stop_savepoint_id_ == id) stop_savepoint_id_.reset();
    if (chain_ != nullptr) chain_->notifyCheckpointAborted(id);
  });
}

void StreamTask::createSortedInput() {
  // BATCH sorts every keyed input (Flink's SortingDataInput); STREAMING only in FLIP-327's mixed mode
  // (interval-during-backlog 0: no checkpoint can come while the input is sorted). The graph decided.
  if (vertex_->sorted_input == graph::JobVertex::SortedInput::kNone) return;
  const bool batch = vertex_->sorted_input == graph::JobVertex::SortedInput::kBatch;
  const auto* factory = dynamic_cast<const StreamOperatorFactory*>(vertex_->operators[0].factory.get());
  if (factory == nullptr) return;
  // A two-input head sorts both inputs or neither (MultiInputSortingDataInput); each sorter gets its
  // share of the sort memory, as Flink divides the managed memory by the inputs.
  const int inputs = factory->numFirstInputEdges() >= 0 ? 2 : 1;
  sort::SorterOptions options = sort::SorterOptions::fromConfiguration(*setup_.config);
  options.memory_bytes = std::max<int64_t>(1, options.memory_bytes / inputs);
  std::vector<std::unique_ptr<KeyedInputSorter>> sorters;
  for (int input = 0; input < inputs; ++input) {
    options.owner = inputs == 1 ? name_ : fmt::format("{} input {}", name_, input + 1);
    auto sorter = factory->createKeyedInputSorter(options, vertex_->max_parallelism, input);
    if (!sorter) return;
    sorters.push_back(std::move(sorter));
  }
  sorted_input_ =
      std::make_unique<SortingBacklogDataInput>(std::move(sorters), *chain_, &metrics_[0], batch_size_, name_);
  if (batch) sorted_input_->startBatch();
}

void StreamTask::headWatermark(Watermark mark) {
  if (sorted_input_) sorted_input_->processWatermark(mark);
  else chain_->processWatermark(mark);
}

void StreamTask::headRecordAttributes(RecordAttributes attributes, int input) {
  if (sorted_input_) sorted_input_->processRecordAttributes(attributes, input == 0 ? 0 : input - 1);
  else chain_->processRecordAttributes(attributes, input);
}

void StreamTask::headWatermarkStatus(WatermarkStatus status) {
  if (sorted_input_) sorted_input_->processWatermarkStatus(status);
  else chain_->processWatermarkStatus(status);
}

void StreamTask::emitValveOutput(const ValveOutput& out) {
  if (out.status == WatermarkStatus::kActive) headWatermarkStatus(WatermarkStatus::kActive);
  if (out.watermark) headWatermark(Watermark{*out.watermark});
  if (out.status == WatermarkStatus::kIdle) headWatermarkStatus(WatermarkStatus::kIdle);
}

void StreamTask::endOfInput() {
  if (sorted_input_) sorted_input_->endOfInput();
  if (stop_savepoint_id_) {
    // Stopped with a savepoint: its barrier came before the end of every input. Wait for its completion
    // (sinks commit on it); the savepoint is the final checkpoint. Without --drain the operators are not
    // ended (Flink's EndOfData STOP: no endInput, no final watermark from a watermark assigner).
    while (!stop_completed_) {
      mailbox_.waitForMail(std::chrono::milliseconds(100));
      if (mailbox_.hasMail()) mailbox_.runAll();
      throwIfCancelled();
    }
    if (stop_kind_ == checkpoint::CheckpointKind::kSavepointTerminate) chain_->endInput();
    flushAll();
    for (auto& w : writers_) w->endOfPartition();
    return;
  }
  // An injected failure that waits for a completed checkpoint fires before the end: this task still takes
  // part in checkpoints (every input has ended, so the coordinator triggers it) until one completes.
  while (chain_->injectedFailurePending()) {
    mailbox_.waitForMail(std::chrono::milliseconds(100));
    if (mailbox_.hasMail()) mailbox_.runAll();
    throwIfCancelled();
  }
  chain_->throwInjectedFailureIfDue();
  chain_->endInput();
  if (setup_.checkpoint_responder != nullptr) {
    flushAll();
    setup_.checkpoint_responder->reportEndOfInput(setup_.vertex_index, setup_.subtask_index);
    if (setup_.periodic_checkpointing) {
      // FLIP-147's final checkpoint: the task stays triggerable (its inputs ended) until a checkpoint taken
      // after the end of input completed, so two-phase-commit sinks commit their last data on its
      // notification, and a restore never starts from before output this task already committed. Without
      // periodic checkpoints none would come: the operators committed at endInput.
      const int64_t before_end = last_checkpoint_id_;
      setup_.checkpoint_responder->requestCheckpoint();
      while (last_completed_checkpoint_id_ <= before_end) {
        mailbox_.waitForMail(std::chrono::milliseconds(100));
        if (mailbox_.hasMail()) mailbox_.runAll();
        throwIfCancelled();
      }
    }
    // From now on this subtask takes part in checkpoints with its final state; the checkpoints it already
    // snapshotted are acknowledged first with the state of their barrier.
    if (async_checkpoints_) async_checkpoints_->drain();
    const int64_t start = steadyNanos();
    checkpoint::TaskStateSnapshot final_state = chain_->snapshotState(last_checkpoint_id_ + 1, /*canonical=*/true);
    checkpoint::CheckpointMetrics metrics;
    metrics.sync_duration_ms = (steadyNanos() - start) / 1000000;
    setup_.checkpoint_responder->reportFinalState(setup_.vertex_index, setup_.subtask_index, std::move(final_state),
                                                  metrics);
  }
  for (auto& w : writers_) w->endOfPartition();
}

bool StreamTask::anyPending() const {
  for (const auto& w : writers_) {
    if (w->hasPending()) return true;
  }
  return false;
}

void StreamTask::flushAll() {
  for (auto& w : writers_) w->flush();
  flush_deadline_.reset();
}

std::optional<std::chrono::steady_clock::time_point> StreamTask::checkFlush() {
  if (buffer_timeout_ms_ <= 0 || !anyPending()) {
    flush_deadline_.reset();
    return std::nullopt;
  }
  const auto now = std::chrono::steady_clock::now();
  if (!flush_deadline_) {
    flush_deadline_ = now + std::chrono::milliseconds(buffer_timeout_ms_);
  } else if (now >= *flush_deadline_) {
    flushAll();
    return std::nullopt;
  }
  return flush_deadline_;
}

}  // namespace sluice::runtime

namespace sluice::runtime {

std::optional<std::chrono::steady_clock::time_point> StreamTask::fireTimers() {
  timers_.fireDue();
  const auto next = timers_.nextTimer();
  if (!next) return std::nullopt;
  const int64_t wait_ms = std::max<int64_t>(0, *next - timers_.currentProcessingTime());
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
}

std::optional<std::chrono::steady_clock::time_point> StreamTask::checkDebloat() {
  const auto now = std::chrono::steady_clock::now();
  const auto period = std::chrono::milliseconds(debloat_config_.period_ms);
  if (!debloater_) {
    debloater_ = std::make_unique<network::BufferDebloater>(debloat_config_);
    // The producers start at the starting size (FLINK-36556): the metric shows it until the first period.
    debloated_buffer_size_.store(debloater_->lastBufferSize(), std::memory_order_relaxed);
    debloat_deadline_ = now + period;
    return debloat_deadline_;
  }
  if (now < *debloat_deadline_) return debloat_deadline_;
  debloat_deadline_ = now + period;
  // Flink's StreamTask debloat action: throughput since the last period over the buffers the gate holds.
  InputGate* gate = setup_.input_gate;
  const int64_t throughput = gate->throughput().calculateThroughput();
  const std::optional<int32_t> size = debloater_->recalculateBufferSize(throughput, gate->queuedBuffers());
  if (size) {
    for (const auto& channel : gate->inputChannels()) channel->announceBufferSize(*size);
    buffer_size_announcements_.fetch_add(1, std::memory_order_relaxed);
  }
  debloated_buffer_size_.store(debloater_->lastBufferSize(), std::memory_order_relaxed);
  estimated_time_to_consume_ms_.store(debloater_->lastEstimatedTimeToConsumeBuffersMs(), std::memory_order_relaxed);
  return debloat_deadline_;
}

void StreamTask::setUpAttributeCombiners(int channels) {
  // One combiner per input of the head; a channel's index within it counts only its input's channels.
  const int inputs = channel_input_.empty() ? 1 : 2;
  std::vector<int> per_input(static_cast<size_t>(inputs), 0);
  channel_in_input_.assign(static_cast<size_t>(channels), 0);
  for (int c = 0; c < channels; ++c) {
    const int input = channel_input_.empty() ? 0 : channel_input_[static_cast<size_t>(c)];
    channel_in_input_[static_cast<size_t>(c)] = per_input[static_cast<size_t>(input)]++;
  }
  attribute_combiners_.clear();
  for (int n : per_input) attribute_combiners_.emplace_back(n);
}

void StreamTask::computeChannelInputs() {
  channel_input_.clear();
  const auto* factory = dynamic_cast<const StreamOperatorFactory*>(vertex_->operators[0].factory.get());
  const int first_edges = factory == nullptr ? -1 : factory->numFirstInputEdges();
  if (first_edges < 0) return;
  // The cluster's gate layout: the head's input edges in order, per edge its connected producers ascending.
  for (size_t k = 0; k < vertex_->inputs.size(); ++k) {
    const graph::JobEdge& edge = setup_.job->edges[static_cast<size_t>(vertex_->inputs[k])];
    const int producers = static_cast<int>(
        graph::connectedProducers(edge.partitioner.strategy,
                                  setup_.job->vertices[static_cast<size_t>(edge.source_vertex)].parallelism,
                                  vertex_->parallelism, setup_.subtask_index)
            .size());
    for (int c = 0; c < producers; ++c) channel_input_.push_back(static_cast<int>(k) >= first_edges ? 1 : 0);
  }
  SLUICE_CHECK(static_cast<int>(channel_input_.size()) == setup_.input_gate->numChannels(),
               "task '{}': {} channels by edge layout, gate has {}", name_, channel_input_.size(),
               setup_.input_gate->numChannels());
}

}  // namespace sluice::runtime

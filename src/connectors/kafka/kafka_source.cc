#include "connectors/kafka/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "common/error.h"
#include "connectors/kafka/kafka_internal.h"
#include "connectors/operator_util.h"

namespace sluice::connectors::kafka {

namespace {

// Java's String.hashCode over the topic's bytes (topic names are ASCII in practice).
int32_t javaStringHash(const std::string& s) {
  uint32_t h = 0;
  for (unsigned char c : s) h = 31 * h + c;
  return static_cast<int32_t>(h);
}

std::map<std::string, std::string> consumerProperties(const KafkaTableSpec& spec, bool with_group) {
  std::map<std::string, std::string> props = spec.properties;
  props["bootstrap.servers"] = spec.bootstrap;
  props["enable.partition.eof"] = "true";
  props["enable.auto.commit"] = "false";
  props["enable.auto.offset.store"] = "false";
  if (!with_group) props.erase("group.id");
  return props;
}

struct Watermarks {
  int64_t lo = 0;
  int64_t hi = 0;
};

// One metadata or offset request waits at most this long while the brokers are out of reach, so the
// outage is reported within seconds and retried (up to properties.default.api.timeout.ms in all).
constexpr int kAttemptMs = 1000;

// "Kafka source of table 't' (topic 'x', brokers 'h:9092')", the subject of the outage messages.
std::string sourceClient(const KafkaTableSpec& spec) {
  return fmt::format("Kafka source of table '{}' ({}, brokers '{}')", spec.table_name, spec.topicsText(),
                     spec.bootstrap);
}

// Runs `request(attempt_ms)` until it answers. KafkaUnavailableError from an attempt is reported through
// `outage` and retried until the outage lasted properties.default.api.timeout.ms; then it fails the job.
template <typename F>
auto retrying(const KafkaTableSpec& spec, BrokerOutage& outage, rd_kafka_t* rk, F&& request) {
  while (true) {
    const auto started = std::chrono::steady_clock::now();
    try {
      auto result = request(std::min(spec.timeout_ms, kAttemptMs));
      outage.recovered();
      return result;
    } catch (const KafkaUnavailableError& e) {
      outage.failed(e.what());
      outage.throwIfExpired();
    }
    // A refused connection answers at once: back off as librdkafka's reconnect.backoff.ms would.
    if (std::chrono::steady_clock::now() - started < std::chrono::milliseconds(100)) rd_kafka_poll(rk, 100);
  }
}

Watermarks queryOffsets(rd_kafka_t* rk, const KafkaTableSpec& spec, const std::string& topic, int partition,
                        int timeout_ms) {
  Watermarks w;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, topic.c_str(), partition, &w.lo, &w.hi, timeout_ms);
  if (isBrokerUnreachable(err))
    throw KafkaUnavailableError(fmt::format("Cannot read the offsets of Kafka topic '{}' partition {} from '{}' "
                                            "within {} ms: {}",
                                            topic, partition, spec.bootstrap, timeout_ms, rd_kafka_err2str(err)));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Cannot read the offsets of Kafka topic '{}' partition {} from '{}' within {} ms "
                                "(table '{}'): {}",
                                topic, partition, spec.bootstrap, spec.timeout_ms, spec.table_name,
                                rd_kafka_err2str(err)));
  return w;
}

// Offsets of the first record with a timestamp >= ts per partition; -1 where the broker has none (or,
// like the mock cluster, cannot look timestamps up).
std::map<int, int64_t> offsetsForTimes(rd_kafka_t* rk, const KafkaTableSpec& spec, const std::string& topic,
                                       const std::vector<int>& partitions, int64_t ts) {
  PartitionList list;
  for (int p : partitions) list.add(topic, p, ts);
  rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk, list.list, spec.timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Cannot look up offsets by timestamp in Kafka topic '{}' from '{}' (table '{}'): {}",
                                topic, spec.bootstrap, spec.table_name, rd_kafka_err2str(err)));
  std::map<int, int64_t> out;
  for (int i = 0; i < list.list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list.list->elems[i];
    out[tp.partition] = tp.err == RD_KAFKA_RESP_ERR_NO_ERROR ? tp.offset : -1;
  }
  return out;
}

std::map<int, int64_t> committedOffsets(const KafkaTableSpec& spec, const std::string& topic,
                                        const std::vector<int>& partitions) {
  RdKafkaPtr rk = newHandle(RD_KAFKA_CONSUMER, consumerProperties(spec, true), spec.table_name);
  PartitionList list;
  for (int p : partitions) list.add(topic, p, RD_KAFKA_OFFSET_INVALID);
  rd_kafka_resp_err_t err = rd_kafka_committed(rk.get(), list.list, spec.timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    throw UserError(fmt::format("Cannot fetch the committed offsets of group '{}' for Kafka topic '{}' from '{}' "
                                "(table '{}'): {}",
                                spec.group_id.value_or(""), topic, spec.bootstrap, spec.table_name,
                                rd_kafka_err2str(err)));
  std::map<int, int64_t> out;
  for (int i = 0; i < list.list->cnt; ++i) out[list.list->elems[i].partition] = list.list->elems[i].offset;
  return out;
}

std::vector<std::string> resolveTopics(rd_kafka_t* rk, const KafkaTableSpec& spec, BrokerOutage& outage) {
  if (spec.topic_pattern.empty()) return spec.topics;
  std::regex re;
  try {
    re = std::regex(spec.topic_pattern);
  } catch (const std::regex_error& e) {
    throw UserError(fmt::format("Invalid 'topic-pattern' '{}' of table '{}': {}", spec.topic_pattern, spec.table_name,
                                e.what()));
  }
  std::vector<std::string> topics;
  try {
    topics = retrying(spec, outage, rk, [&](int ms) { return fetchTopics(rk, ms, spec.bootstrap); });
  } catch (const UserError& e) {
    throw UserError(fmt::format("Cannot resolve 'topic-pattern' '{}' of table '{}': {}", spec.topic_pattern,
                                spec.table_name, e.what()));
  }
  std::vector<std::string> out;
  for (const std::string& t : topics)
    if (std::regex_match(t, re)) out.push_back(t);
  return out;
}

// Turns records into rows of the table: decodes key and value with their formats and assembles the
// physical columns (key columns from the key in EXCEPT_KEY mode or for tombstones, else from the value,
// as Flink's DynamicKafkaDeserializationSchema) followed by the metadata columns.
class RecordDecoder {
 public:
  explicit RecordDecoder(const KafkaTableSpec& spec) : spec_(spec), produced_(spec.producedType({})) {
    value_ = FormatDecoder::create(spec.value_format, spec.valueRowType());
    value_batch_ = types::RowBatch(spec.valueRowType());
    if (spec.key_format) {
      key_ = FormatDecoder::create(*spec.key_format, spec.keyRowType());
      key_batch_ = types::RowBatch(spec.keyRowType());
    }
    // Where each physical column comes from.
    source_.assign(spec.physical.size(), Source{});
    for (size_t k = 0; k < spec.key_fields.size(); ++k)
      source_[static_cast<size_t>(spec.key_fields[k])].key = static_cast<int>(k);
    for (size_t v = 0; v < spec.value_fields.size(); ++v)
      source_[static_cast<size_t>(spec.value_fields[v])].value = static_cast<int>(v);
  }

  const types::RowType& producedType() const { return produced_; }

  /// Appends the rows of `m` to `out`; returns how many. Throws InputError naming topic, partition and
  /// offset when a format cannot decode the record.
  size_t add(const rd_kafka_message_t* m, const std::string& topic, types::RowBatch& out) {
    value_batch_.clear();
    size_t rows = 0;
    bool tombstone = false;
    size_t key_rows = 0;
    const char* part = "value";
    try {
      if (m->payload == nullptr) {
        if (spec_.upsert) {
          tombstone = true;
          rows = 1;
        } else {
          rows = value_->decode(nullptr, value_batch_);
        }
      } else {
        std::string_view bytes(static_cast<const char*>(m->payload), m->len);
        rows = value_->decode(&bytes, value_batch_);
      }
      if (rows == 0) return 0;
      if (key_) {
        part = "key";
        key_batch_.clear();
        if (m->key != nullptr) {
          std::string_view kb(static_cast<const char*>(m->key), m->key_len);
          key_rows = key_->decode(&kb, key_batch_);
        } else {
          key_rows = key_->decode(nullptr, key_batch_);
        }
      }
    } catch (const InputError& e) {
      throw InputError(fmt::format("Kafka topic '{}' partition {} offset {} ({}): {}", topic, m->partition, m->offset,
                                   part, e.what()));
    }
    rd_kafka_timestamp_type_t ts_type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    const int64_t ts = rd_kafka_message_timestamp(m, &ts_type);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < source_.size(); ++c) {
        const Source& src = source_[c];
        types::Column& col = out.column(c);
        const bool from_value = src.value >= 0 && !tombstone;
        if (from_value) {
          col.appendFrom(value_batch_.column(static_cast<size_t>(src.value)), r);
        } else if (src.key >= 0 && key_rows > 0) {
          col.appendFrom(key_batch_.column(static_cast<size_t>(src.key)), 0);
        } else {
          col.appendNull();
        }
      }
      for (size_t k = 0; k < spec_.metadata.size(); ++k) {
        types::Column& col = out.column(source_.size() + k);
        switch (spec_.metadata[k]) {
          case KafkaMetadata::kTopic: col.appendString(topic); break;
          case KafkaMetadata::kPartition: col.appendLong(m->partition); break;
          case KafkaMetadata::kOffset: col.appendLong(m->offset); break;
          case KafkaMetadata::kTimestamp: col.appendLong(ts); break;
          case KafkaMetadata::kTimestampType:
            col.appendString(ts_type == RD_KAFKA_TIMESTAMP_CREATE_TIME       ? "CreateTime"
                             : ts_type == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? "LogAppendTime"
                                                                             : "NoTimestampType");
            break;
        }
      }
      out.kinds().push_back(tombstone ? types::RowKind::kDelete : value_batch_.kind(r));
    }
    return rows;
  }

 private:
  struct Source {
    int key = -1;
    int value = -1;
  };
  const KafkaTableSpec& spec_;
  types::RowType produced_;
  std::unique_ptr<FormatDecoder> key_;
  std::unique_ptr<FormatDecoder> value_;
  types::RowBatch key_batch_;
  types::RowBatch value_batch_;
  std::vector<Source> source_;
};

class KafkaSplitEnumerator final : public runtime::SplitEnumerator<KafkaPartitionSplit> {
 public:
  KafkaSplitEnumerator(std::shared_ptr<const KafkaTableSpec> spec, int parallelism)
      : spec_(std::move(spec)), parallelism_(parallelism) {}
  std::optional<KafkaPartitionSplit> handleSplitRequest(int subtask) override {
    auto it = pending_.find(subtask);
    if (it == pending_.end()) {
      auto splits = discoverKafkaSplits(*spec_, subtask, parallelism_);
      it = pending_.emplace(subtask, std::deque<KafkaPartitionSplit>(splits.begin(), splits.end())).first;
    }
    if (it->second.empty()) return std::nullopt;
    KafkaPartitionSplit s = std::move(it->second.front());
    it->second.pop_front();
    return s;
  }

 private:
  std::shared_ptr<const KafkaTableSpec> spec_;
  int parallelism_;
  std::map<int, std::deque<KafkaPartitionSplit>> pending_;
};

class KafkaSourceReader final : public runtime::SourceReader<types::RowBatch, KafkaPartitionSplit> {
 public:
  KafkaSourceReader(std::shared_ptr<const KafkaTableSpec> spec, const runtime::SourceReaderContext& ctx)
      : spec_(std::move(spec)),
        decoder_(*spec_),
        outage_(sourceClient(*spec_), spec_->timeout_ms, "properties.default.api.timeout.ms") {
    runtime::OperatorContext octx;
    octx.config = ctx.config;
    batch_size_ = batchSizeOf(octx);
    messages_.resize(batch_size_);
    if (spec_->commit_offsets) {
      committer_ = std::make_unique<OffsetCommitter>(consumerProperties(*spec_, true), spec_->table_name);
      next_commit_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec_->commit_interval_ms);
    }
  }

  /// The unfinished splits at their next offsets; remembers the offsets to commit when `checkpoint_id`
  /// completes (those of the splits finished so far too, as Flink's offsetsOfFinishedSplits).
  std::vector<KafkaPartitionSplit> snapshotState(int64_t checkpoint_id) override {
    std::vector<KafkaPartitionSplit> out;
    Offsets offsets = finished_offsets_;
    for (const auto& [tp, split] : active_) {
      out.push_back(split);
      offsets[tp] = split.start_offset;
    }
    if (commitsOnCheckpoint()) {
      pending_commits_[checkpoint_id] = std::move(offsets);
      // Checkpoints that never complete must not pile up (Flink keeps at most the max concurrent ones).
      while (pending_commits_.size() > kMaxPendingCommits) pending_commits_.erase(pending_commits_.begin());
    }
    return out;
  }

  /// Commits the offsets of `checkpoint_id` to the group (asynchronously; Flink's commitOffsets), and
  /// forgets those of earlier checkpoints: a later checkpoint's offsets subsume theirs.
  void notifyCheckpointComplete(int64_t checkpoint_id) override {
    auto it = pending_commits_.find(checkpoint_id);
    if (it == pending_commits_.end()) return;
    if (!checkpoint_committer_)
      checkpoint_committer_ = std::make_unique<OffsetCommitter>(consumerProperties(*spec_, true), spec_->table_name);
    for (const auto& [tp, next] : it->second) checkpoint_committer_->advance(tp.first, tp.second, next);
    checkpoint_committer_->commitAsync();
    pending_commits_.erase(pending_commits_.begin(), std::next(it));
  }

  ~KafkaSourceReader() override { close(); }

  void addSplit(KafkaPartitionSplit split) override {
    if (split.stop_offset >= 0 && split.start_offset >= split.stop_offset) {
      finished_offsets_[{split.topic, split.partition}] = split.start_offset;  // nothing to read
      return;
    }
    if (!rk_) {
      HandleCallbacks cb;
      cb.error_cb = &KafkaSourceReader::onError;
      cb.opaque = this;
      rk_ = newHandle(RD_KAFKA_CONSUMER, consumerProperties(*spec_, false), spec_->table_name, cb);
      queue_ = rd_kafka_queue_new(rk_.get());
    }
    auto it = consumers_.find(split.topic);
    if (it == consumers_.end())
      it = consumers_.emplace(split.topic, std::make_unique<SimpleConsumer>(rk_.get(), split.topic, queue_)).first;
    it->second->start(split.partition, split.start_offset);
    if (committer_) committer_->advance(split.topic, split.partition, split.start_offset);
    active_[{split.topic, split.partition}] = split;
    created_.push_back(splitId(split.topic, split.partition));
  }

  runtime::InputStatus pollNext(runtime::ReaderOutput<types::RowBatch>& output) override {
    for (const std::string& id : created_) output.createOutputForSplit(id);
    created_.clear();
    if (active_.empty()) return endOfInput();
    if (committer_ && std::chrono::steady_clock::now() >= next_commit_) {
      committer_->commitAsync();
      next_commit_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec_->commit_interval_ms);
    }
    rd_kafka_poll(rk_.get(), 0);  // serves onError
    const ssize_t n = rd_kafka_consume_batch_queue(queue_, kPollMs, messages_.data(), messages_.size());
    if (n <= 0 || outage_.down()) checkBrokers(n > 0);
    if (n <= 0) return runtime::InputStatus::kNothingAvailable;
    // One batch per partition (split), so the operator can keep a watermark per partition.
    std::map<std::pair<std::string, int>, types::RowBatch> batches;
    size_t i = 0;
    try {
      for (; i < static_cast<size_t>(n); ++i) {
        rd_kafka_message_t* m = messages_[i];
        const std::string topic = m->rkt != nullptr ? rd_kafka_topic_name(m->rkt) : "";
        auto it = batches.find({topic, m->partition});
        if (it == batches.end())
          it = batches
                   .emplace(std::make_pair(topic, static_cast<int>(m->partition)),
                            types::RowBatch(decoder_.producedType()))
                   .first;
        handle(m, it->second);
        rd_kafka_message_destroy(m);
      }
    } catch (...) {
      for (; i < static_cast<size_t>(n); ++i) rd_kafka_message_destroy(messages_[i]);
      // The records before the one that failed were accepted: pass them on before failing, so the job
      // loses nothing it read (a failing record never adds a partial row to its batch).
      collect(batches, output);
      throw;
    }
    collect(batches, output);
    for (const std::string& id : finished_) output.releaseOutputForSplit(id);
    finished_.clear();
    return active_.empty() ? endOfInput() : runtime::InputStatus::kMoreAvailable;
  }

  void close() override {
    if (committer_) {
      // Best effort on cancel or failure, as a Kafka consumer's close with auto commit (the end of input
      // committed already); bounded so a dead broker does not hold the failure back.
      committer_->commitSync(std::min(spec_->timeout_ms, 5000));
      committer_.reset();
    }
    if (checkpoint_committer_) {
      // Lets the last completed checkpoint's commit arrive (it holds only offsets of that checkpoint, so
      // this is safe after a failure too); bounded as above.
      checkpoint_committer_->commitSync(std::min(spec_->timeout_ms, 5000));
      checkpoint_committer_.reset();
    }
    consumers_.clear();
    active_.clear();
    if (queue_ != nullptr) {
      rd_kafka_queue_destroy(queue_);
      queue_ = nullptr;
    }
    rk_.reset();
  }

 private:
  static constexpr int kPollMs = 5;
  static constexpr size_t kMaxPendingCommits = 16;
  using Offsets = std::map<std::pair<std::string, int>, int64_t>;

  bool commitsOnCheckpoint() const { return spec_->commit_on_checkpoint && spec_->group_id.has_value(); }

  // All splits done: commits what was read (properties.enable.auto.commit) before the job can end.
  runtime::InputStatus endOfInput() {
    if (committer_) {
      const std::string err = committer_->commitSync(spec_->timeout_ms);
      if (!err.empty())
        throw UserError(
            fmt::format("Cannot commit the offsets read from {} to group '{}' at '{}' (table '{}', "
                        "properties.enable.auto.commit): {}",
                        spec_->topicsText(), spec_->group_id.value_or(""), spec_->bootstrap, spec_->table_name, err));
    }
    return runtime::InputStatus::kEndOfInput;
  }

  // The next offset to read of a partition, for the committed offsets.
  void consumed(const std::string& topic, int partition, int64_t next) {
    if (committer_) committer_->advance(topic, partition, next);
    auto it = active_.find({topic, partition});
    if (it != active_.end()) it->second.start_offset = next;
  }

  // Broken connections, all brokers down (librdkafka's error callback, served by rd_kafka_poll).
  static void onError(rd_kafka_t*, int err, const char* reason, void* opaque) {
    auto* self = static_cast<KafkaSourceReader*>(opaque);
    if (isBrokerUnreachable(static_cast<rd_kafka_resp_err_t>(err))) self->outage_.failed(reason);
  }

  // librdkafka's simple consumer keeps waiting on a partition whose topic was deleted, and retries
  // unreachable brokers forever. While no record arrives, look the topics up every min(timeout, 5 s), and
  // every second during an outage (each request waits at most kAttemptMs, so checkpoints and
  // cancellation still get the task thread): a topic gone fails the job (UserError), an outage is
  // reported and fails the job after properties.default.api.timeout.ms (KafkaUnavailableError).
  void checkBrokers(bool got_messages) {
    const auto now = std::chrono::steady_clock::now();
    if (got_messages && !outage_.down()) {
      last_check_ = now;
      return;
    }
    if (last_check_ == std::chrono::steady_clock::time_point{}) last_check_ = now;
    const auto interval = std::chrono::milliseconds(outage_.down() ? kAttemptMs : std::min(spec_->timeout_ms, 5000));
    if (now - last_check_ >= interval) {
      last_check_ = now;
      try {
        for (const auto& [topic, consumer] : consumers_)
          fetchPartitions(rk_.get(), topic, std::min(spec_->timeout_ms, kAttemptMs), spec_->bootstrap);
        outage_.recovered();
      } catch (const KafkaUnavailableError& e) {
        outage_.failed(e.what());
      }
    }
    outage_.throwIfExpired();
  }

  // Flink's KafkaPartitionSplit.splitId(): "topic-partition".
  static std::string splitId(const std::string& topic, int partition) {
    return topic + "-" + std::to_string(partition);
  }

  void finish(const std::string& topic, int partition) {
    if (auto split = active_.find({topic, partition}); split != active_.end()) {
      finished_offsets_[split->first] = split->second.start_offset;
      active_.erase(split);
      finished_.push_back(splitId(topic, partition));
    }
    auto it = consumers_.find(topic);
    if (it != consumers_.end()) it->second->stop(partition);
  }

  static void collect(std::map<std::pair<std::string, int>, types::RowBatch>& batches,
                      runtime::ReaderOutput<types::RowBatch>& output) {
    for (auto& [key, batch] : batches) {
      if (!batch.empty()) output.collectForSplit(splitId(key.first, key.second), std::move(batch));
    }
  }

  void handle(rd_kafka_message_t* m, types::RowBatch& batch) {
    const std::string topic = m->rkt != nullptr ? rd_kafka_topic_name(m->rkt) : "";
    auto it = active_.find({topic, m->partition});
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // m->offset is the next offset to fetch: a bounded split whose end is reached is done.
      if (it != active_.end() && it->second.stop_offset >= 0 && m->offset >= it->second.stop_offset) {
        consumed(topic, m->partition, it->second.stop_offset);
        finish(topic, m->partition);
      }
      return;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      handleError(m, topic);
      return;
    }
    if (it == active_.end()) return;  // a record fetched before its split finished
    KafkaPartitionSplit& split = it->second;
    if (split.stop_offset >= 0 && m->offset >= split.stop_offset) {
      consumed(topic, m->partition, split.stop_offset);
      finish(topic, m->partition);
      return;
    }
    rd_kafka_timestamp_type_t tstype;
    const int64_t ts = rd_kafka_message_timestamp(m, &tstype);
    if (split.stop_timestamp >= 0 && ts >= split.stop_timestamp) {
      consumed(topic, m->partition, m->offset);
      finish(topic, m->partition);
      return;
    }
    if (split.start_timestamp >= 0) {
      if (ts < split.start_timestamp) {
        consumed(topic, m->partition, m->offset + 1);
        if (split.stop_offset >= 0 && m->offset + 1 >= split.stop_offset) finish(topic, m->partition);
        return;
      }
      split.start_timestamp = -1;  // from the first record at or after the timestamp on, read everything
    }
    decoder_.add(m, topic, batch);
    consumed(topic, m->partition, m->offset + 1);
    if (split.stop_offset >= 0 && m->offset + 1 >= split.stop_offset) finish(topic, m->partition);
  }

  void handleError(rd_kafka_message_t* m, const std::string& topic) {
    const rd_kafka_resp_err_t err = m->err;
    const std::string name = topic.empty() && !active_.empty() ? active_.begin()->first.first : topic;
    if (isBrokerUnreachable(err)) {
      // librdkafka reconnects by itself: checkBrokers probes the brokers while the outage lasts.
      outage_.failed(rd_kafka_message_errstr(m));
      return;
    }
    throw UserError(fmt::format("Reading Kafka topic '{}' partition {} failed (table '{}', brokers '{}'): {}", name,
                                m->partition, spec_->table_name, spec_->bootstrap, rd_kafka_message_errstr(m)));
  }

  std::shared_ptr<const KafkaTableSpec> spec_;
  RecordDecoder decoder_;

 public:
  BrokerOutage outage_;

 private:
  size_t batch_size_ = 1024;
  RdKafkaPtr rk_;
  rd_kafka_queue_t* queue_ = nullptr;
  std::map<std::string, std::unique_ptr<SimpleConsumer>> consumers_;
  std::map<std::pair<std::string, int>, KafkaPartitionSplit> active_;
  std::vector<std::string> created_;   // splits added since the last pollNext (announced to the output)
  std::vector<std::string> finished_;  // splits finished during the current pollNext
  std::vector<rd_kafka_message_t*> messages_;
  std::chrono::steady_clock::time_point last_check_{};  ///< last broker probe, or last records while healthy
  std::unique_ptr<OffsetCommitter> committer_;          ///< properties.enable.auto.commit only
  std::chrono::steady_clock::time_point next_commit_{};  ///< when the next periodic commit is due
  Offsets finished_offsets_;                            ///< next offset of every finished split
  std::map<int64_t, Offsets> pending_commits_;          ///< offsets per checkpoint, until it completes
  std::unique_ptr<OffsetCommitter> checkpoint_committer_;  ///< commit.offsets.on.checkpoint
};

}  // namespace

int kafkaSplitOwner(const std::string& topic, int partition, int parallelism) {
  // Java's int arithmetic: the product wraps around.
  const uint32_t product = static_cast<uint32_t>(javaStringHash(topic)) * 31u;
  const int start = static_cast<int>((product & 0x7FFFFFFFu) % static_cast<uint32_t>(parallelism));
  return (start + partition) % parallelism;
}

std::vector<KafkaPartitionSplit> discoverKafkaSplits(const KafkaTableSpec& spec, int subtask, int parallelism) {
  RdKafkaPtr rk = newHandle(RD_KAFKA_CONSUMER, consumerProperties(spec, false), spec.table_name);
  BrokerOutage outage(sourceClient(spec), spec.timeout_ms, "properties.default.api.timeout.ms");
  std::vector<KafkaPartitionSplit> out;
  for (const std::string& topic : resolveTopics(rk.get(), spec, outage)) {
    std::vector<int> mine;
    for (int p : retrying(spec, outage, rk.get(),
                          [&](int ms) { return fetchPartitions(rk.get(), topic, ms, spec.bootstrap); }))
      if (kafkaSplitOwner(topic, p, parallelism) == subtask) mine.push_back(p);
    if (mine.empty()) continue;
    std::map<int, Watermarks> marks;
    for (int p : mine)
      marks[p] = retrying(spec, outage, rk.get(), [&](int ms) { return queryOffsets(rk.get(), spec, topic, p, ms); });
    std::map<int, int64_t> committed;
    if (spec.startup == StartupMode::kGroupOffsets || spec.bounded == BoundedMode::kGroupOffsets ||
        (spec.startup == StartupMode::kSpecificOffsets && spec.group_id))
      committed = committedOffsets(spec, topic, mine);
    std::map<int, int64_t> start_times;
    if (spec.startup == StartupMode::kTimestamp)
      start_times = offsetsForTimes(rk.get(), spec, topic, mine, spec.startup_timestamp);
    std::map<int, int64_t> stop_times;
    if (spec.bounded == BoundedMode::kTimestamp)
      stop_times = offsetsForTimes(rk.get(), spec, topic, mine, spec.bounded_timestamp);
    for (int p : mine) {
      const Watermarks w = marks[p];
      KafkaPartitionSplit s;
      s.topic = topic;
      s.partition = p;
      switch (spec.startup) {
        case StartupMode::kEarliestOffset: s.start_offset = w.lo; break;
        case StartupMode::kLatestOffset: s.start_offset = w.hi; break;
        case StartupMode::kTimestamp:
          if (start_times[p] >= 0) {
            s.start_offset = start_times[p];
          } else {
            s.start_offset = w.lo;
            s.start_timestamp = spec.startup_timestamp;
          }
          break;
        case StartupMode::kSpecificOffsets: {
          // Flink's OffsetsInitializer.offsets(): a listed offset as given, an unlisted partition at the
          // group's committed offset, else earliest; the reset strategy EARLIEST also applies when the
          // offset is out of range (before the log start or past its end), as the consumer's
          // auto.offset.reset would on OFFSET_OUT_OF_RANGE.
          auto it = spec.startup_offsets.find(p);
          const int64_t o = it != spec.startup_offsets.end() ? it->second : committed.count(p) ? committed[p] : -1;
          s.start_offset = o >= w.lo && o <= w.hi ? o : w.lo;
          break;
        }
        case StartupMode::kGroupOffsets: {
          // Flink's OffsetsInitializer.committedOffsets(reset): the committed offset, or the reset strategy
          // of 'properties.auto.offset.reset' when there is none or it is out of range.
          const int64_t c = committed[p];
          if (c >= w.lo && c <= w.hi) {
            s.start_offset = c;
          } else if (spec.auto_offset_reset == "earliest") {
            s.start_offset = w.lo;
          } else if (spec.auto_offset_reset == "latest") {
            s.start_offset = w.hi;
          } else {
            throw UserError(fmt::format(
                "Undefined offset with no reset policy for partition {}-{}: group '{}' has {} (table '{}'; set "
                "'properties.auto.offset.reset' to 'earliest' or 'latest').",
                topic, p, spec.group_id.value_or(""),
                c < 0 ? std::string("no committed offset")
                      : fmt::format("committed offset {}, out of the range [{}, {}]", c, w.lo, w.hi),
                spec.table_name));
          }
          break;
        }
      }
      switch (spec.bounded) {
        case BoundedMode::kUnbounded: s.stop_offset = -1; break;
        case BoundedMode::kLatestOffset: s.stop_offset = w.hi; break;
        case BoundedMode::kTimestamp:
          if (stop_times[p] >= 0) {
            s.stop_offset = stop_times[p];
          } else {
            s.stop_offset = w.hi;
            s.stop_timestamp = spec.bounded_timestamp;
          }
          break;
        case BoundedMode::kSpecificOffsets: {
          auto it = spec.bounded_offsets.find(p);
          s.stop_offset = it != spec.bounded_offsets.end() ? it->second : w.hi;
          break;
        }
        case BoundedMode::kGroupOffsets: {
          const int64_t c = committed[p];
          if (c < 0)
            throw UserError(fmt::format("Kafka topic '{}' partition {} has no committed offset for group '{}' to stop "
                                        "at ('scan.bounded.mode' = 'group-offsets', table '{}').",
                                        topic, p, spec.group_id.value_or(""), spec.table_name));
          s.stop_offset = c;
          break;
        }
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

void KafkaSourceOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  RowSourceReaderOperator::open(ctx, output);
  if (ctx.metrics != nullptr)
    static_cast<KafkaSourceReader*>(reader())->outage_.setCounter(&ctx.metrics->num_connection_outages);
}

std::unique_ptr<runtime::SplitEnumerator<KafkaPartitionSplit>> KafkaSource::createEnumerator(int parallelism) const {
  return std::make_unique<KafkaSplitEnumerator>(spec_, std::max(1, parallelism));
}

std::unique_ptr<runtime::SourceReader<types::RowBatch, KafkaPartitionSplit>> KafkaSource::createReader(
    const runtime::SourceReaderContext& ctx) const {
  return std::make_unique<KafkaSourceReader>(spec_, ctx);
}

std::shared_ptr<const runtime::StreamOperatorFactory> KafkaTableSource::operatorFactory() const {
  auto spec = spec_;
  auto watermarks = watermarks_;
  return runtime::makeOperatorFactory(
      [spec, watermarks] { return std::make_unique<KafkaSourceOperator>(spec, watermarks); }, true);
}

table::ChangelogMode KafkaTableSource::changelogMode() const {
  if (spec_->upsert) return table::ChangelogMode::kUpsert;
  return spec_->value_format.isChangelog() ? table::ChangelogMode::kAll : table::ChangelogMode::kInsertOnly;
}

std::string KafkaTableSource::summary() const {
  return fmt::format("{} {}, format={}", spec_->upsert ? "upsert-kafka" : "kafka", spec_->topicsText(),
                     spec_->value_format.name);
}

void KafkaTableSource::applyReadableMetadata(const std::vector<table::MetadataColumn>& columns) {
  auto spec = std::make_shared<KafkaTableSpec>(*spec_);
  spec->metadata.clear();
  spec->metadata_types.clear();
  for (const auto& c : columns) {
    using types::TypeId;
    const TypeId id = c.type.id;
    bool ok = false;
    KafkaMetadata m = KafkaMetadata::kTopic;
    if (c.key == "topic" || c.key == "timestamp-type") {
      m = c.key == "topic" ? KafkaMetadata::kTopic : KafkaMetadata::kTimestampType;
      ok = id == TypeId::kVarchar || id == TypeId::kChar;
    } else if (c.key == "partition") {
      m = KafkaMetadata::kPartition;
      ok = id == TypeId::kInt || id == TypeId::kBigInt;
    } else if (c.key == "offset") {
      m = KafkaMetadata::kOffset;
      ok = id == TypeId::kBigInt;
    } else if (c.key == "timestamp") {
      // Flink's type is TIMESTAMP_LTZ(3); a TIMESTAMP(3) column gets the UTC wall clock of the instant.
      m = KafkaMetadata::kTimestamp;
      ok = id == TypeId::kTimestampLtz || id == TypeId::kTimestamp;
    }
    if (!ok)
      throw UserError(fmt::format("Metadata column '{}' of table '{}' cannot hold Kafka's '{}' metadata: the type is {} "
                                  "but should be {}.",
                                  c.name, spec_->table_name, c.key, c.type.toString(),
                                  readableKafkaMetadata().at(c.key).toString()));
    spec->metadata.push_back(m);
    spec->metadata_types.push_back(c.type);
  }
  spec_ = std::move(spec);
}

}  // namespace sluice::connectors::kafka

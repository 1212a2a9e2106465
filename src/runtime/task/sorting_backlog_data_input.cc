#include "runtime/task/sorting_backlog_data_input.h"

#include "common/error.h"
#include "runtime/task/operator_chain.h"
#include "runtime/task/task_cancellation.h"

namespace sluice::runtime {

namespace {

size_t elementRecords(const StreamElement& batch) {
  if (const auto* rows = std::get_if<types::RowBatch>(&batch)) return rows->numRows();
  return std::get<ObjectBatchPtr>(batch)->size();
}

}  // namespace

SortingBacklogDataInput::SortingBacklogDataInput(std::vector<std::unique_ptr<KeyedInputSorter>> sorters,
                                                 OperatorChain& chain, OperatorMetrics* metrics, size_t batch_size,
                                                 std::string task_name)
    : merge_(std::move(sorters)), chain_(chain), metrics_(metrics), batch_size_(batch_size),
      task_name_(std::move(task_name)) {
  SLUICE_CHECK(metrics_ != nullptr && batch_size_ > 0, "task '{}': incomplete sorted input", task_name_);
}

SortingBacklogDataInput::~SortingBacklogDataInput() = default;

void SortingBacklogDataInput::processBatch(types::RowBatch&& batch, int input) {
  if (mode_ == Mode::kProcessingRealtime) {
    if (input == 0) chain_.processBatch(std::move(batch));
    else chain_.processBatch2(std::move(batch));
    return;
  }
  SLUICE_CHECK(mode_ == Mode::kSortingBacklog, "task '{}': a record while flushing the backlog", task_name_);
  merge_.addRows(batch, input);
  addCount(metrics_->num_records_sorted, static_cast<int64_t>(batch.numRows()));
  publishSorterMetrics();
}

void SortingBacklogDataInput::processObjects(ObjectBatchPtr&& batch, int input) {
  if (mode_ == Mode::kProcessingRealtime) {
    if (input == 0) chain_.processObjects(std::move(batch));
    else chain_.processObjects2(std::move(batch));
    return;
  }
  SLUICE_CHECK(mode_ == Mode::kSortingBacklog, "task '{}': a record while flushing the backlog", task_name_);
  merge_.addObjects(*batch, input);
  addCount(metrics_->num_records_sorted, static_cast<int64_t>(batch->size()));
  publishSorterMetrics();
}

void SortingBacklogDataInput::processWatermark(Watermark mark) {
  if (mode_ == Mode::kProcessingRealtime) {
    chain_.processWatermark(mark);
    return;
  }
  // Held back while sorting: a watermark would let the operator fire timers before it saw the records.
  if (!max_watermark_ || mark.timestamp > *max_watermark_) max_watermark_ = mark.timestamp;
}

void SortingBacklogDataInput::processWatermarkStatus(WatermarkStatus status) {
  if (mode_ == Mode::kProcessingRealtime) {
    chain_.processWatermarkStatus(status);
    return;
  }
  last_status_ = status;
}

void SortingBacklogDataInput::processRecordAttributes(RecordAttributes attributes, int input) {
  if (batch_) return;  // BATCH: everything is one sorted phase; there is no realtime to switch to
  SLUICE_CHECK(input >= 0 && input < merge_.numInputs(), "task '{}': record attributes of input {}", task_name_,
               input);
  const auto i = static_cast<size_t>(input);
  backlog_[i] = attributes.is_backlog;
  switch (mode_) {
    case Mode::kProcessingRealtime:
      chain_.processRecordAttributes(attributes, chainInput(input));
      delivered_[i] = attributes.is_backlog;
      if (attributes.is_backlog) startSorting();
      return;
    case Mode::kSortingBacklog:
      if (attributes.is_backlog && !delivered_[i]) {
        chain_.processRecordAttributes(attributes, chainInput(input));
        delivered_[i] = true;
      }
      // An input that left backlog waits for the others: the flush starts once none is backlog.
      if (!backlog_[0] && !backlog_[1]) startFlush();
      return;
    case Mode::kFlushingBacklog:
      SLUICE_CHECK(false, "task '{}': record attributes while flushing the backlog", task_name_);
  }
}

void SortingBacklogDataInput::startBatch() {
  batch_ = true;
  startSorting();
}

void SortingBacklogDataInput::startSorting() {
  SLUICE_CHECK(mode_ == Mode::kProcessingRealtime, "task '{}': sorting started twice", task_name_);
  mode_ = Mode::kSortingBacklog;
  metrics_->sorting_input.store(1, std::memory_order_relaxed);
}

void SortingBacklogDataInput::startFlush() {
  mode_ = Mode::kFlushingBacklog;
  merge_.finish();
  publishSorterMetrics();
  chain_.beginSortedInput();
}

void SortingBacklogDataInput::emitSorted(StreamElement&& batch, int input) {
  if (auto* rows = std::get_if<types::RowBatch>(&batch)) {
    if (input == 0) chain_.processBatch(std::move(*rows));
    else chain_.processBatch2(std::move(*rows));
  } else if (input == 0) {
    chain_.processObjects(std::move(std::get<ObjectBatchPtr>(batch)));
  } else {
    chain_.processObjects2(std::move(std::get<ObjectBatchPtr>(batch)));
  }
}

void SortingBacklogDataInput::flushNext() {
  SLUICE_CHECK(mode_ == Mode::kFlushingBacklog, "task '{}': flushNext while not flushing", task_name_);
  // About batch_size_ records per call: interleaved keys of two inputs come as many small batches.
  size_t emitted = 0;
  StreamElement batch;
  int input = 0;
  while (emitted < batch_size_) {
    if (!merge_.next(batch_size_ - emitted, batch, input)) {
      finishFlush(/*announce_realtime=*/true);
      return;
    }
    emitted += elementRecords(batch);
    emitSorted(std::move(batch), input);
  }
}

void SortingBacklogDataInput::finishFlush(bool announce_realtime) {
  chain_.endSortedInput();
  publishSorterMetrics();
  merge_.reset();
  mode_ = Mode::kProcessingRealtime;
  metrics_->sorting_input.store(0, std::memory_order_relaxed);
  for (int input = 0; input < merge_.numInputs(); ++input) {
    bool& delivered = delivered_[static_cast<size_t>(input)];
    if (announce_realtime && delivered) chain_.processRecordAttributes(RecordAttributes{false}, chainInput(input));
    delivered = false;
  }
  if (last_status_) chain_.processWatermarkStatus(*last_status_);
  if (max_watermark_) chain_.processWatermark(Watermark{*max_watermark_});
  last_status_.reset();
  max_watermark_.reset();
}

void SortingBacklogDataInput::endOfInput() {
  if (mode_ == Mode::kProcessingRealtime) return;
  if (mode_ == Mode::kSortingBacklog) startFlush();
  // A long flush still sees a cancellation.
  CancellationCheck<> cancellation;
  StreamElement batch;
  int input = 0;
  while (merge_.next(batch_size_, batch, input)) {
    cancellation.tick();
    emitSorted(std::move(batch), input);
  }
  finishFlush(/*announce_realtime=*/false);
}

void SortingBacklogDataInput::close() { merge_.reset(); }

void SortingBacklogDataInput::publishSorterMetrics() {
  metrics_->num_bytes_spilled.store(merge_.bytesSpilled(), std::memory_order_relaxed);
}

}  // namespace sluice::runtime

#include "runtime/task/sorting_backlog_data_input.h"

#include "common/error.h"
#include "runtime/task/operator_chain.h"
#include "runtime/task/task_cancellation.h"

namespace sluice::runtime {

SortingBacklogDataInput::SortingBacklogDataInput(std::unique_ptr<KeyedInputSorter> sorter, OperatorChain& chain,
                                                 OperatorMetrics* metrics, size_t batch_size, std::string task_name)
    : sorter_(std::move(sorter)), chain_(chain), metrics_(metrics), batch_size_(batch_size),
      task_name_(std::move(task_name)) {
  SLUICE_CHECK(sorter_ != nullptr && metrics_ != nullptr && batch_size_ > 0, "task '{}': incomplete sorted input",
               task_name_);
}

SortingBacklogDataInput::~SortingBacklogDataInput() = default;

void SortingBacklogDataInput::processBatch(types::RowBatch&& batch) {
  if (mode_ == Mode::kProcessingRealtime) {
    chain_.processBatch(std::move(batch));
    return;
  }
  SLUICE_CHECK(mode_ == Mode::kSortingBacklog, "task '{}': a record while flushing the backlog", task_name_);
  sorter_->addRows(batch);
  addCount(metrics_->num_records_sorted, static_cast<int64_t>(batch.numRows()));
  publishSorterMetrics();
}

void SortingBacklogDataInput::processObjects(ObjectBatchPtr&& batch) {
  if (mode_ == Mode::kProcessingRealtime) {
    chain_.processObjects(std::move(batch));
    return;
  }
  SLUICE_CHECK(mode_ == Mode::kSortingBacklog, "task '{}': a record while flushing the backlog", task_name_);
  sorter_->addObjects(*batch);
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

void SortingBacklogDataInput::processRecordAttributes(RecordAttributes attributes) {
  if (batch_) return;  // BATCH: everything is one sorted phase; there is no realtime to switch to
  switch (mode_) {
    case Mode::kProcessingRealtime:
      chain_.processRecordAttributes(attributes);
      if (attributes.is_backlog) startSorting();
      return;
    case Mode::kSortingBacklog:
      if (!attributes.is_backlog) startFlush();
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
  sorter_->finish();
  publishSorterMetrics();
  chain_.beginSortedInput();
}

void SortingBacklogDataInput::flushNext() {
  SLUICE_CHECK(mode_ == Mode::kFlushingBacklog, "task '{}': flushNext while not flushing", task_name_);
  StreamElement batch;
  if (!sorter_->next(batch_size_, batch)) {
    finishFlush(/*announce_realtime=*/true);
    return;
  }
  if (auto* rows = std::get_if<types::RowBatch>(&batch)) {
    chain_.processBatch(std::move(*rows));
  } else {
    chain_.processObjects(std::move(std::get<ObjectBatchPtr>(batch)));
  }
}

void SortingBacklogDataInput::finishFlush(bool announce_realtime) {
  chain_.endSortedInput();
  publishSorterMetrics();
  sorter_->reset();
  mode_ = Mode::kProcessingRealtime;
  metrics_->sorting_input.store(0, std::memory_order_relaxed);
  if (announce_realtime) chain_.processRecordAttributes(RecordAttributes{false});
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
  while (sorter_->next(batch_size_, batch)) {
    cancellation.tick();
    if (auto* rows = std::get_if<types::RowBatch>(&batch)) {
      chain_.processBatch(std::move(*rows));
    } else {
      chain_.processObjects(std::move(std::get<ObjectBatchPtr>(batch)));
    }
  }
  finishFlush(/*announce_realtime=*/false);
}

void SortingBacklogDataInput::close() { sorter_->reset(); }

void SortingBacklogDataInput::publishSorterMetrics() {
  metrics_->num_bytes_spilled.store(sorter_->sorter().bytesSpilled(), std::memory_order_relaxed);
}

}  // namespace sluice::runtime

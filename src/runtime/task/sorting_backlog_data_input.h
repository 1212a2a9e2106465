#pragma once
/// The sorted input of a keyed one-input head operator (Flink's SortingBacklogDataInput, FLIP-327, and
/// the SortingDataInput of BATCH mode): the task routes its input through it, and while the input is
/// backlog the records go to the head's KeyedInputSorter and reach the operator grouped by key when the
/// backlog ends, so the operator touches each key's state once instead of once per record.
///
/// Modes (reference: SortingBacklogDataInput):
///  - PROCESSING_REALTIME: everything passes through. RecordAttributes(backlog) passes on and switches to
///    SORTING_BACKLOG.
///  - SORTING_BACKLOG: records into the sorter; watermarks held (the largest kept), only the last watermark
///    status kept; the task declines a checkpoint (sorting()). A RecordAttributes(not backlog) switches
///    to FLUSHING_BACKLOG.
///  - FLUSHING_BACKLOG: the sorted records go to the head a batch per call of flushNext() (the task runs
///    mail between batches and reads no input meanwhile); once the sorter is empty the head gets
///    RecordAttributes(not backlog), then the kept status, then Watermark(max), and the mode is
///    PROCESSING_REALTIME again. RecordAttributes while flushing is an InternalError.
/// The end of input while sorting flushes everything, then the kept status and watermark. In BATCH mode
/// the input starts in SORTING_BACKLOG (startBatch) and is flushed at its end.
/// Around a flush the head gets beginSortedInput / endSortedInput.
///
/// Metrics (the head's OperatorMetrics): sorting_input while SORTING or FLUSHING, num_records_sorted and
/// num_bytes_spilled cumulated over the phases. Threading: the task thread only.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "runtime/operators/keyed_input_sorter.h"
#include "runtime/stream_element.h"

namespace sluice::runtime {

class OperatorChain;
struct OperatorMetrics;

class SortingBacklogDataInput {
 public:
  enum class Mode { kProcessingRealtime, kSortingBacklog, kFlushingBacklog };

  /// `chain` and `metrics` (the head's) outlive this input; `batch_size`: records per flushed batch.
  SortingBacklogDataInput(std::unique_ptr<KeyedInputSorter> sorter, OperatorChain& chain, OperatorMetrics* metrics,
                          size_t batch_size, std::string task_name);
  ~SortingBacklogDataInput();

  void processBatch(types::RowBatch&& batch);
  void processObjects(ObjectBatchPtr&& batch);
  void processWatermark(Watermark mark);
  void processWatermarkStatus(WatermarkStatus status);
  void processRecordAttributes(RecordAttributes attributes);
  /// BATCH mode: sort from the first record to the end of input; record attributes are ignored.
  void startBatch();
  /// FLUSHING_BACKLOG: hands one batch to the head, or finishes the flush (see the class comment).
  void flushNext();
  /// The input ended: a pending sort or flush runs to its end first.
  void endOfInput();
  /// Removes the sorter's spill files (also on failure).
  void close();

  Mode mode() const { return mode_; }
  bool flushing() const { return mode_ == Mode::kFlushingBacklog; }
  /// SORTING_BACKLOG or FLUSHING_BACKLOG: records are in the sorter, not in state, so no snapshot
  /// (FLIP-327 mixed mode takes none during backlog).
  bool sorting() const { return mode_ != Mode::kProcessingRealtime; }

 private:
  void startSorting();
  void startFlush();
  void finishFlush(bool announce_realtime);
  void publishSorterMetrics();

  std::unique_ptr<KeyedInputSorter> sorter_;
  OperatorChain& chain_;
  OperatorMetrics* metrics_;
  size_t batch_size_;
  std::string task_name_;
  Mode mode_ = Mode::kProcessingRealtime;
  bool batch_ = false;
  std::optional<int64_t> max_watermark_;
  std::optional<WatermarkStatus> last_status_;
};

}  // namespace sluice::runtime

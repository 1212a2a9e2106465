#pragma once
/// The sorted input of a keyed head operator (Flink's SortingBacklogDataInput, FLIP-327, and the
/// SortingDataInput / MultiInputSortingDataInput of BATCH mode): the task routes its input (or both
/// inputs of a two-input head) through it, and while an input is backlog the records of every input go to
/// their KeyedInputSorters and reach the operator grouped by key when the backlog ends, so the operator
/// touches each key's state once instead of once per record. A two-input head gets each key's records of
/// both inputs together (SortedInputMerge).
///
/// Modes (reference: SortingBacklogDataInput; two inputs as FLIP-327 asks of multi-input operators:
/// sort while any input is backlog, flush when every input has left it):
///  - PROCESSING_REALTIME: everything passes through. RecordAttributes pass on; a backlog one switches to
///    SORTING_BACKLOG.
///  - SORTING_BACKLOG: records into the sorters; watermarks held (the largest kept), only the last
///    watermark status kept; the task declines a checkpoint (sorting()). Another input turning backlog
///    passes on; an input leaving backlog is held. Once no input is backlog: FLUSHING_BACKLOG.
///  - FLUSHING_BACKLOG: the sorted records go to the head about a batch per call of flushNext() (the task
///    runs mail between batches and reads no input meanwhile); once the sorters are empty the head gets
///    RecordAttributes(not backlog) for each input it last saw backlog, then the kept status, then
///    Watermark(max), and the mode is PROCESSING_REALTIME again. RecordAttributes while flushing is an
///    InternalError.
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
#include <vector>

#include "runtime/stream_element.h"
#include "runtime/task/sorted_input_merge.h"

namespace sluice::runtime {

class OperatorChain;
struct OperatorMetrics;

class SortingBacklogDataInput {
 public:
  enum class Mode { kProcessingRealtime, kSortingBacklog, kFlushingBacklog };

  /// `sorters`: one per input of the head (one, or two for a two-input head, first input first).
  /// `chain` and `metrics` (the head's) outlive this input; `batch_size`: records per flushed batch.
  SortingBacklogDataInput(std::vector<std::unique_ptr<KeyedInputSorter>> sorters, OperatorChain& chain,
                          OperatorMetrics* metrics, size_t batch_size, std::string task_name);
  ~SortingBacklogDataInput();

  /// A batch of input `input` (0: the only or first input, 1: the second).
  void processBatch(types::RowBatch&& batch, int input = 0);
  void processObjects(ObjectBatchPtr&& batch, int input = 0);
  /// The head's watermark / status (one for all its inputs: the task's valve spans them).
  void processWatermark(Watermark mark);
  void processWatermarkStatus(WatermarkStatus status);
  /// The combined attributes of input `input` (0-based, as processBatch).
  void processRecordAttributes(RecordAttributes attributes, int input = 0);
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
  /// Hands a sorted batch of input `input` to the head.
  void emitSorted(StreamElement&& batch, int input);
  /// The chain's number of input `input`: 0 for a one-input head, 1 / 2 for a two-input one.
  int chainInput(int input) const { return merge_.numInputs() == 1 ? 0 : input + 1; }
  void publishSorterMetrics();

  SortedInputMerge merge_;
  OperatorChain& chain_;
  OperatorMetrics* metrics_;
  size_t batch_size_;
  std::string task_name_;
  Mode mode_ = Mode::kProcessingRealtime;
  bool batch_ = false;
  std::optional<int64_t> max_watermark_;
  std::optional<WatermarkStatus> last_status_;
  bool backlog_[2] = {false, false};    ///< per input: its last attributes
  bool delivered_[2] = {false, false};  ///< per input: the head last got backlog attributes
};

}  // namespace sluice::runtime

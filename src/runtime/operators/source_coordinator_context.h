#pragma once
/// The enumerator's view of its execution (Flink's SplitEnumeratorContext) and the implementation the
/// source subtasks share (Flink's SourceCoordinatorContext). FLIP-309: an enumerator reports backlog with
/// setIsProcessingBacklog; the context keeps the current status, reports it to the checkpoint coordinator
/// (which spaces out or stops checkpoints while any source is in backlog) and hands it to every
/// registered reader, a reader that registers later getting the current status at once (Flink's
/// IsProcessingBacklogEvent, SourceCoordinatorTest#testSetIsProcessingBacklog).
/// Threading: thread-safe; an enumerator may call it from handleSplitRequest or from a thread of its own.

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace sluice::runtime {

namespace checkpoint {
class BacklogStatusListener;
}

/// What an enumerator may ask of its execution (Flink's SplitEnumeratorContext). Given to
/// SplitEnumerator::start; outlives the enumerator. Thread-safe.
class SplitEnumeratorContext {
 public:
  virtual ~SplitEnumeratorContext() = default;
  /// The number of readers (subtasks) of the source.
  virtual int currentParallelism() const = 0;
  /// The source is (true) or is no longer (false) processing backlog: data far behind real time, e.g. a
  /// history before live changes (FLIP-309). Sources that never call it are not in backlog.
  virtual void setIsProcessingBacklog(bool backlog) = 0;
};

/// See the file comment.
class SourceCoordinatorContext final : public SplitEnumeratorContext {
 public:
  /// `source_uid`: the source operator's uid (the coordinator's key for it). `listener`: the checkpoint
  /// coordinator, or null when checkpointing is off; must outlive the context.
  SourceCoordinatorContext(std::string source_uid, int parallelism, checkpoint::BacklogStatusListener* listener);

  int currentParallelism() const override { return parallelism_; }
  /// Reports to the listener first, then to every registered reader, only when the status changes.
  void setIsProcessingBacklog(bool backlog) override;

  /// The last reported status (nullopt: none yet).
  std::optional<bool> isProcessingBacklog() const;

  /// Reader `subtask` (re)registers: `deliver` gets every later status change, and the current status at
  /// once when there is one. `deliver` runs on the reporting thread under the context's lock: it must
  /// only hand the value over (e.g. to an atomic the reader's task thread polls), never call back.
  void registerReader(int subtask, std::function<void(bool backlog)> deliver);
  /// Reader `subtask` closed: it gets nothing more.
  void unregisterReader(int subtask);

 private:
  const std::string source_uid_;
  const int parallelism_;
  checkpoint::BacklogStatusListener* const listener_;
  mutable std::mutex mu_;
  std::optional<bool> backlog_;
  std::map<int, std::function<void(bool)>> readers_;
};

}  // namespace sluice::runtime

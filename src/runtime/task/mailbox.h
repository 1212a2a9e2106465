#pragma once
/// The task's mailbox (Flink's TaskMailbox / MailboxProcessor, FLIP-27 threading model): other threads put
/// mails (actions) that the task thread runs between two default actions (processing input), so
/// operators never need locks.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace sluice::runtime {

/// A thread-safe FIFO of mails. `put` may be called from any thread; the other methods only from the
/// task thread.
class Mailbox {
 public:
  using Mail = std::function<void()>;

  /// Enqueues a mail (any thread) and wakes the task: notifies `waitForMail` and calls the wakeup hook
  /// (the task's input gate, so a task blocked on input runs the mail promptly).
  void put(Mail mail);
  /// True when at least one mail is queued. Cheap (one relaxed atomic load): checked in the hot loop.
  bool hasMail() const { return size_.load(std::memory_order_relaxed) > 0; }
  /// Runs the mails queued at the time of the call, in FIFO order (task thread). Mails put while they run
  /// wait for the next call. Exceptions from a mail propagate (remaining mails stay queued).
  /// Returns the number of mails run.
  size_t runAll();
  /// Blocks the task thread until a mail is queued or `timeout` passes. Returns hasMail().
  bool waitForMail(std::chrono::nanoseconds timeout);
  /// Sets the hook `put` calls after enqueueing (set before the task starts; not thread-safe).
  void setWakeupHook(std::function<void()> hook) { wakeup_hook_ = std::move(hook); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Mail> mails_;
  std::deque<Mail> running_;
  std::atomic<size_t> size_{0};
  std::function<void()> wakeup_hook_;
};

}  // namespace sluice::runtime

#include "runtime/task/mailbox.h"

namespace sluice::runtime {

void Mailbox::put(Mail mail) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mails_.push_back(std::move(mail));
    size_.store(mails_.size(), std::memory_order_relaxed);
  }
  cv_.notify_one();
  if (wakeup_hook_) wakeup_hook_();
}

size_t Mailbox::runAll() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (mails_.empty() && running_.empty()) return 0;
    // Keep mails that an earlier call left behind (a mail threw) in front.
    while (!mails_.empty()) {
      running_.push_back(std::move(mails_.front()));
      mails_.pop_front();
    }
    size_.store(0, std::memory_order_relaxed);
  }
  size_t ran = 0;
  while (!running_.empty()) {
    Mail mail = std::move(running_.front());
    running_.pop_front();
    mail();
    ++ran;
  }
  return ran;
}

bool Mailbox::waitForMail(std::chrono::nanoseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !mails_.empty(); });
  return !mails_.empty();
}

}  // namespace sluice::runtime

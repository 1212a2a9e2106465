#include "runtime/task/mailbox.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace sluice::runtime {
namespace {

TEST(MailboxTest, RunsMailsInFifoOrder) {
  Mailbox mb;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) mb.put([&order, i] { order.push_back(i); });
  EXPECT_TRUE(mb.hasMail());
  EXPECT_EQ(mb.runAll(), 5u);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(mb.hasMail());
  EXPECT_EQ(mb.runAll(), 0u);
}

TEST(MailboxTest, MailPutByAMailRunsInTheNextRound) {
  Mailbox mb;
  std::vector<int> order;
  mb.put([&] {
    order.push_back(1);
    mb.put([&] { order.push_back(3); });
  });
  mb.put([&] { order.push_back(2); });
  EXPECT_EQ(mb.runAll(), 2u);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_TRUE(mb.hasMail());
  EXPECT_EQ(mb.runAll(), 1u);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(MailboxTest, PutFromAnotherThreadWakesTheTaskAndCallsTheHook) {
  Mailbox mb;
  std::atomic<int> hook_calls{0};
  mb.setWakeupHook([&] { hook_calls.fetch_add(1); });
  int value = 0;
  std::thread producer([&] { mb.put([&] { value = 42; }); });
  // Without the wakeup this would wait the full hour.
  EXPECT_TRUE(mb.waitForMail(std::chrono::hours(1)));
  producer.join();
  EXPECT_EQ(hook_calls.load(), 1);
  mb.runAll();
  EXPECT_EQ(value, 42);
}

TEST(MailboxTest, WaitWithoutMailTimesOut) {
  Mailbox mb;
  EXPECT_FALSE(mb.waitForMail(std::chrono::milliseconds(1)));
}

TEST(MailboxTest, ThrowingMailKeepsTheRestQueued) {
  Mailbox mb;
  std::vector<int> order;
  mb.put([] { throw std::runtime_error("mail failed"); });
  mb.put([&] { order.push_back(2); });
  EXPECT_THROW(mb.runAll(), std::runtime_error);
  EXPECT_EQ(mb.runAll(), 1u);
  EXPECT_EQ(order, std::vector<int>{2});
}

}  // namespace
}  // namespace sluice::runtime

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/network/credit_based.h"
#include "runtime/network/record_serializer.h"

namespace sluice::runtime::network {
namespace {

// A producer-side pool for the sender's buffers.
struct Producer {
  NetworkBufferPool global{64, 256};
  std::shared_ptr<LocalBufferPool> pool = global.createBufferPool(1, 64, "partition");
  Buffer data(char fill) {
    Buffer b = pool->requestBuffer();
    const std::string bytes(10, fill);
    b.append(reinterpret_cast<const uint8_t*>(bytes.data()), 10);
    return b;
  }
  Buffer event() {
    Buffer b = pool->requestBuffer();
    EventSerializer::toBuffer({NetworkEventType::kWatermark, 1, ""}, b);
    return b;
  }
};

TEST(CreditBasedSubpartitionViewTest, NeverSendsDataWithoutCredit) {
  Producer p;
  CreditBasedSubpartitionView view(/*initial_credit=*/0);
  int notified = 0;
  view.setAvailabilityListener([&] { ++notified; });
  view.add(p.data('a'));
  view.add(p.data('b'));
  EXPECT_FALSE(view.isAvailable());
  EXPECT_FALSE(view.pollNext().has_value());
  EXPECT_EQ(view.backlog(), 2);
  EXPECT_EQ(notified, 0);
  view.addCredit(1);
  EXPECT_EQ(notified, 1);  // turned available
  auto first = view.pollNext();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->buffer.data()[0], 'a');
  EXPECT_EQ(first->backlog, 1);  // 'b' still queued
  EXPECT_EQ(first->sequence_number, 0);
  EXPECT_EQ(view.credit(), 0);
  EXPECT_FALSE(view.pollNext().has_value());  // credit used up
  EXPECT_THROW(view.addCredit(0), InputError);
}

TEST(CreditBasedSubpartitionViewTest, DataWithoutCreditOrBacklogIsAnnounced) {
  // FLINK-16641: a receiver without exclusive buffers learns of data waiting without credit only from a
  // BacklogAnnouncement; the view asks for one when such data arrives behind no other data.
  Producer p;
  CreditBasedSubpartitionView view(0);
  int announcements = 0;
  view.setBacklogListener([&] { ++announcements; });
  view.add(p.data('a'));
  EXPECT_EQ(announcements, 1);
  view.add(p.data('b'));  // the backlog grew; the announced one asked for buffers already
  view.add(p.event());
  EXPECT_EQ(announcements, 1);
  view.addCredit(2);
  ASSERT_TRUE(view.pollNext().has_value());
  auto second = view.pollNext();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->backlog, 0);             // the receiver now believes nothing waits
  ASSERT_TRUE(view.pollNext().has_value());  // the event
  view.add(p.data('c'));                     // no credit left, nothing queued: announced again
  EXPECT_EQ(announcements, 2);
  view.addCredit(1);
  view.add(p.data('d'));  // behind 'c', with credit: its buffer response will carry the backlog
  EXPECT_EQ(announcements, 2);
}

TEST(CreditBasedSubpartitionViewTest, EventsNeedNoCreditButWaitBehindData) {
  Producer p;
  CreditBasedSubpartitionView view(0);
  view.add(p.event());
  auto e = view.pollNext();
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->buffer.isBuffer());
  view.add(p.data('a'));
  view.add(p.event());
  // The event is behind a data buffer without credit: order is kept, nothing is sent.
  EXPECT_FALSE(view.pollNext().has_value());
  view.addCredit(1);
  EXPECT_TRUE(view.pollNext()->buffer.isBuffer());
  auto e2 = view.pollNext();
  ASSERT_TRUE(e2.has_value());
  EXPECT_FALSE(e2->buffer.isBuffer());
  EXPECT_EQ(e2->sequence_number, 2);
}

TEST(CreditBasedSubpartitionViewTest, NewBufferSize) {
  CreditBasedSubpartitionView view(2);
  EXPECT_EQ(view.bufferSize(), 0);
  view.notifyNewBufferSize(512);
  EXPECT_EQ(view.bufferSize(), 512);
  EXPECT_THROW(view.notifyNewBufferSize(-1), InputError);
}

// A consumer TaskManager: a gate pool with `floating` floating buffers and one remote channel.
struct Consumer {
  NetworkBufferPool global;
  std::shared_ptr<LocalBufferPool> gate_pool;
  CreditBasedReceiver channel;
  Consumer(int32_t exclusive, int32_t floating)
      : global(exclusive + floating, 256),
        gate_pool(global.createBufferPool(0, std::max(1, floating), "gate")),
        channel("channel 0", global, *gate_pool, exclusive) {
    channel.setup();
  }
  // Copies a sent buffer into a receiving buffer, as the network decoder will.
  void receive(BufferAndBacklog sent) {
    Buffer into = channel.requestBuffer();
    ASSERT_TRUE(into.valid()) << "sender sent without credit";
    into.append(sent.buffer.data(), sent.buffer.size());
    channel.onBuffer(std::move(into), sent.sequence_number, sent.backlog);
  }
};

TEST(CreditBasedReceiverTest, ExclusiveBuffersAreTheInitialCredit) {
  Consumer c(2, 8);
  EXPECT_EQ(c.channel.initialCredit(), 2);
  EXPECT_EQ(c.channel.availableBuffers(), 2);
  EXPECT_EQ(c.channel.unannouncedCredit(), 0);
  // 10 segments, 2 taken by the channel.
  EXPECT_EQ(c.global.availableSegments(), 8);
}

TEST(CreditBasedReceiverTest, BacklogRequestsFloatingBuffers) {
  Consumer c(2, 8);
  int credit_notifications = 0;
  c.channel.setCreditListener([&] { ++credit_notifications; });
  // The sender announces 5 buffers of backlog: required = 5 + 2 = 7; 2 exclusive available, 5 floating.
  c.channel.onSenderBacklog(5);
  EXPECT_EQ(c.channel.numRequiredBuffers(), 7);
  EXPECT_EQ(c.channel.floatingBuffers(), 5);
  EXPECT_EQ(c.channel.getAndResetUnannouncedCredit(), 5);
  EXPECT_EQ(credit_notifications, 1);
  // A backlog of 20: required 22, but only 8 floating exist: 3 more, then the channel waits as a listener.
  c.channel.onSenderBacklog(20);
  EXPECT_EQ(c.channel.floatingBuffers(), 8);
  EXPECT_EQ(c.channel.getAndResetUnannouncedCredit(), 3);
}

TEST(CreditBasedReceiverTest, WithoutExclusiveBuffersFloatingBuffersFollowTheAnnouncedBacklog) {
  // buffers-per-channel 0 (FLINK-16641): no initial credit; the sender announces its backlog and the
  // receiver lives on the gate's floating buffers alone.
  Consumer c(0, 3);
  EXPECT_EQ(c.channel.initialCredit(), 0);
  EXPECT_EQ(c.channel.availableBuffers(), 0);
  Producer p;
  CreditBasedSubpartitionView view(c.channel.initialCredit());
  view.setBacklogListener([&] { c.channel.onSenderBacklog(view.backlog()); });
  view.add(p.data('a'));  // announced: backlog 1, one floating buffer, one credit
  view.add(p.data('b'));
  EXPECT_EQ(c.channel.floatingBuffers(), 1);
  view.addCredit(c.channel.getAndResetUnannouncedCredit());
  c.receive(*view.pollNext());  // 'a' with backlog 1: required 1, a second floating buffer
  EXPECT_EQ(c.channel.numRequiredBuffers(), 1);
  EXPECT_EQ(c.channel.availableBuffers(), 1);
  view.addCredit(c.channel.getAndResetUnannouncedCredit());
  c.receive(*view.pollNext());  // 'b' with backlog 0: nothing more is required
  EXPECT_EQ(c.channel.numRequiredBuffers(), 0);
  EXPECT_EQ(c.channel.availableBuffers(), 0);
  // Reading returns the floating buffers to the gate's pool, not as credit.
  c.channel.pollNext().recycle();
  c.channel.pollNext().recycle();
  EXPECT_EQ(c.channel.unannouncedCredit(), 0);
  EXPECT_EQ(c.gate_pool->buffersInUse(), 0);
  view.add(p.data('c'));  // announced again: one more floating buffer and its credit
  EXPECT_EQ(c.channel.getAndResetUnannouncedCredit(), 1);
  view.addCredit(1);
  c.receive(*view.pollNext());
  EXPECT_EQ(c.channel.pollNext().data()[0], 'c');
}

TEST(CreditBasedReceiverTest, RecycledBuffersReturnCredit) {
  Consumer c(2, 0);  // exclusive buffers only
  Producer p;
  CreditBasedSubpartitionView view(c.channel.initialCredit());
  view.add(p.data('a'));
  view.add(p.data('b'));
  view.add(p.data('c'));
  // Credit 2: two buffers go (backlogs 2 and 1), the third waits; no floating buffer exists to grant.
  c.receive(*view.pollNext());
  c.receive(*view.pollNext());
  EXPECT_FALSE(view.pollNext().has_value());
  EXPECT_EQ(c.channel.unannouncedCredit(), 0);
  // The consumer reads and releases both: each exclusive buffer back is one credit.
  Buffer a = c.channel.pollNext();
  EXPECT_EQ(a.data()[0], 'a');
  a.recycle();
  EXPECT_EQ(c.channel.unannouncedCredit(), 1);
  c.channel.pollNext().recycle();
  EXPECT_EQ(c.channel.unannouncedCredit(), 2);
  view.addCredit(c.channel.getAndResetUnannouncedCredit());
  auto third = view.pollNext();
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->buffer.data()[0], 'c');
}

TEST(CreditBasedReceiverTest, SurplusFloatingBufferGoesBackInsteadOfCredit) {
  Consumer c(2, 8);
  c.channel.onSenderBacklog(1);  // required 3: 1 floating
  EXPECT_EQ(c.channel.getAndResetUnannouncedCredit(), 1);
  Producer p;
  CreditBasedSubpartitionView view(2);
  view.addCredit(1);
  view.add(p.data('x'));
  c.receive(*view.pollNext());  // backlog 0: required back to 2; floating used first
  // 2 available (exclusive) = 2 required. The received buffer was the floating one: recycling it
  // returns it to the gate pool, no credit.
  Buffer read = c.channel.pollNext();
  read.recycle();
  EXPECT_EQ(c.channel.unannouncedCredit(), 0);
  EXPECT_EQ(c.gate_pool->buffersInUse(), 0);
}

TEST(CreditBasedReceiverTest, OutOfOrderSequenceNumberIsAnError) {
  Consumer c(2, 0);
  Buffer b = c.channel.requestBuffer();
  EXPECT_THROW(c.channel.onBuffer(std::move(b), 1, 0), InputError);
}

TEST(CreditBasedFlowTest, SlowConsumerBoundsInFlightBuffersAndLosesNothing) {
  // 200 buffers through a channel with 2 exclusive + 3 floating buffers; the consumer reads one buffer
  // every third step. The sender never has a data buffer in flight beyond the receiver's free buffers,
  // and everything arrives in order.
  Consumer c(2, 3);
  Producer p;
  CreditBasedSubpartitionView view(c.channel.initialCredit());
  int sent = 0, read = 0, step = 0;
  std::string order;
  while (read < 200) {
    ++step;
    if (sent < 200 && p.pool->buffersInUse() < 40) view.add(p.data(static_cast<char>('a' + sent++ % 26)));
    while (auto next = view.pollNext()) {
      // The decoder must always find a buffer: credit never exceeds the free buffers.
      ASSERT_GT(c.channel.availableBuffers(), 0);
      c.receive(std::move(*next));
      ASSERT_LE(c.channel.queuedBuffers(), 5);
    }
    if (int credit = c.channel.getAndResetUnannouncedCredit(); credit > 0) view.addCredit(credit);
    if (step % 3 == 0) {
      Buffer b = c.channel.pollNext();
      if (b.valid()) {
        order.push_back(static_cast<char>(b.data()[0]));
        ++read;
      }
    }
    ASSERT_LT(step, 10000);
  }
  std::string expected;
  for (int i = 0; i < 200; ++i) expected.push_back(static_cast<char>('a' + i % 26));
  EXPECT_EQ(order, expected);
}

}  // namespace
}  // namespace sluice::runtime::network

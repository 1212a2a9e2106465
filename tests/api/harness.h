#pragma once
// A one-operator test harness (like Flink's OneInputStreamOperatorTestHarness): instantiates the operator
// of a DataStream transformation, feeds it batches and watermarks by hand, drives processing time with a
// manual clock, and collects what it emits.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/datastream.h"
#include "common/config.h"
#include "runtime/time/processing_time_service.h"

namespace sluice::api::testing {

class CollectingOutput final : public runtime::Output {
 public:
  void collect(types::RowBatch&&) override { ADD_FAILURE() << "DataStream operator emitted SQL rows"; }
  void collectObjects(runtime::ObjectBatchPtr&& batch) override { batches.push_back(std::move(batch)); }
  void emitWatermark(runtime::Watermark mark) override { watermarks.push_back(mark.timestamp); }
  void emitWatermarkStatus(runtime::WatermarkStatus status) override {
    statuses.push_back(runtime::watermarkStatusName(status));
  }

  /// Records of output `tag` (0: main) so far, with their timestamps, in emission order.
  template <typename T>
  std::vector<std::pair<T, int64_t>> records(int tag = 0) const {
    std::vector<std::pair<T, int64_t>> out;
    for (const auto& b : batches) {
      if (b->tag() != tag) continue;
      const auto& typed = b->as<T>();
      for (size_t i = 0; i < typed.size(); ++i) out.emplace_back(typed.value(i), typed.timestamp(i));
    }
    return out;
  }
  template <typename T>
  std::vector<T> values(int tag = 0) const {
    std::vector<T> out;
    for (auto& [v, ts] : records<T>(tag)) out.push_back(v);
    return out;
  }
  void clear() { batches.clear(); }

  std::vector<runtime::ObjectBatchPtr> batches;
  std::vector<int64_t> watermarks;
  std::vector<std::string> statuses;  ///< "IDLE" / "ACTIVE", in emission order
};

class Harness {
 public:
  /// The operator behind `stream` (its last transformation), opened as subtask 0 of 1.
  template <typename S>
  explicit Harness(const S& stream) {
    const auto* factory = dynamic_cast<const runtime::StreamOperatorFactory*>(stream.getTransformation()->factory.get());
    EXPECT_NE(factory, nullptr);
    op_ = factory->createOperator();
    runtime::OperatorContext ctx;
    ctx.operator_name = stream.getTransformation()->name;
    ctx.task_name = ctx.operator_name + " (1/1)";
    ctx.config = &config_;
    ctx.metrics = &metrics_;
    ctx.processing_time_service = &timers_;
    op_->open(ctx, &out);
  }
  ~Harness() { op_->close(); }

  /// One batch of (value, timestamp) records into the first input.
  template <typename T>
  void push(std::vector<std::pair<T, int64_t>> records, int input = 1) {
    auto b = runtime::makeObjectBatch<T>();
    for (auto& [v, ts] : records) b->add(std::move(v), ts);
    if (input == 1) op_->processObjects(std::move(b));
    else op_->processObjects2(std::move(b));
  }
  void watermark(int64_t ts) { op_->processWatermark(runtime::Watermark{ts}); }
  void watermarkStatus(runtime::WatermarkStatus status) { op_->processWatermarkStatus(status); }
  /// Sets the processing-time clock (ms) and runs the timers that are due.
  void setProcessingTime(int64_t now) {
    now_ = now;
    timers_.fireDue();
  }
  void endInput() { op_->endInput(); }
  const runtime::OperatorMetrics& metrics() const { return metrics_; }

  CollectingOutput out;

 private:
  Configuration config_;
  runtime::OperatorMetrics metrics_;
  int64_t now_ = 0;
  runtime::ProcessingTimeService timers_{[this] { return now_; }};
  std::unique_ptr<runtime::StreamOperator> op_;
};

}  // namespace sluice::api::testing

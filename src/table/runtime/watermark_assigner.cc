#include "table/runtime/watermark_assigner.h"

#include <algorithm>
#include <limits>
#include <string>

#include "common/config.h"
#include "common/error.h"
#include "runtime/time/processing_time_service.h"
#include "table/functions/calc_program.h"
#include "types/value_format.h"

namespace sluice::table {

using types::RowBatch;

WatermarkAssignerOperator::WatermarkAssignerOperator(int rowtime_index, int watermark_index,
                                                     std::vector<int> output_columns)
    : rowtime_index_(rowtime_index), watermark_index_(watermark_index), output_columns_(std::move(output_columns)) {
  SLUICE_USER_CHECK(rowtime_index_ >= 0, "watermark assigner: row-time column index {} is negative", rowtime_index_);
  SLUICE_USER_CHECK(watermark_index_ >= 0, "watermark assigner: watermark column index {} is negative",
                    watermark_index_);
  for (int c : output_columns_) {
    SLUICE_USER_CHECK(c >= 0, "watermark assigner: output column index {} is negative", c);
  }
}

void WatermarkAssignerOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  idleness_ = runtime::IdlenessTimer(ctx.config != nullptr ? ctx.config->get(options::kIdleTimeout) : 0);
  if (ctx.config != nullptr) backlog_ = runtime::SourceBacklogStatus::forOperator(ctx);
  if (!idleness_.enabled()) return;
  runtime::ProcessingTimeService* timers = ctx.processing_time_service;
  SLUICE_CHECK(timers != nullptr, "watermark assigner '{}': an idle timeout needs processing-time timers",
               ctx.operator_name);
  const int64_t now = timers->currentProcessingTime();
  idleness_.start(now);
  scheduleIdleCheck(now);
}

void WatermarkAssignerOperator::scheduleIdleCheck(int64_t now_ms) {
  runtime::ProcessingTimeService* timers = ctx_.processing_time_service;
  timers->registerTimer(now_ms + runtime::IdlenessTimer::checkIntervalMs(idleness_.timeoutMs()),
                        [this, timers](int64_t) { onIdleCheck(timers->currentProcessingTime()); });
}

void WatermarkAssignerOperator::onIdleCheck(int64_t now_ms) {
  if (closed_) return;
  if (idleness_.checkIfIdle(now_ms) && status_ == runtime::WatermarkStatus::kActive) {
    emitStatus(runtime::WatermarkStatus::kIdle);
  }
  scheduleIdleCheck(now_ms);
}

void WatermarkAssignerOperator::emitStatus(runtime::WatermarkStatus status) {
  status_ = status;
  output_->emitWatermarkStatus(status);
}

void WatermarkAssignerOperator::processWatermarkStatus(runtime::WatermarkStatus status) { emitStatus(status); }

void WatermarkAssignerOperator::close() { closed_ = true; }

void WatermarkAssignerOperator::processBatch(RowBatch&& batch) {
  const size_t rows = batch.numRows();
  if (rows > 0) idleness_.activity();
  if (rows > 0 && status_ == runtime::WatermarkStatus::kIdle) emitStatus(runtime::WatermarkStatus::kActive);
  SLUICE_CHECK(static_cast<size_t>(std::max(rowtime_index_, watermark_index_)) < batch.numColumns(),
               "watermark assigner columns {} / {} beyond a batch of {} columns", rowtime_index_, watermark_index_,
               batch.numColumns());
  const types::Column& rowtime = batch.column(static_cast<size_t>(rowtime_index_));
  const types::Column& wm = batch.column(static_cast<size_t>(watermark_index_));
  SLUICE_CHECK(wm.type().isInt64Backed() && rowtime.type().isInt64Backed(),
               "watermark assigner: row-time {} and watermark {} columns must hold ms values",
               rowtime.type().toString(), wm.type().toString());
  current_watermark_ = maxWatermarkOf(rowtime, wm, current_watermark_, &batch);
  if (current_watermark_ > last_watermark_) {
    // Rows before the first watermark are backlog when that watermark lags (FLIP-328).
    if (auto a = backlog_.beforeFirstRecords(current_watermark_, ctx_.processing_time_service)) {
      output_->emitRecordAttributes(*a);
    }
  }

  if (output_columns_.empty()) {
    output_->collect(std::move(batch));
  } else {
    RowBatch out;
    out.columns().reserve(output_columns_.size());
    for (size_t i = 0; i < output_columns_.size(); ++i) {
      const auto c = static_cast<size_t>(output_columns_[i]);
      SLUICE_CHECK(c < batch.numColumns(), "watermark assigner output column {} beyond a batch of {} columns", c,
                   batch.numColumns());
      // A column listed twice is copied; otherwise its vectors move over.
      const bool repeated = std::count(output_columns_.begin(), output_columns_.end(), output_columns_[i]) > 1;
      if (repeated) {
        out.columns().push_back(batch.column(c));
      } else {
        out.columns().push_back(std::move(batch.column(c)));
      }
    }
    out.kinds() = std::move(batch.kinds());
    output_->collect(std::move(out));
  }

  // Emitted after the rows, never smaller than the last one.
  if (current_watermark_ > last_watermark_) {
    last_watermark_ = current_watermark_;
    output_->emitWatermark(runtime::Watermark{current_watermark_});
    if (auto a = backlog_.onWatermark(current_watermark_, ctx_.processing_time_service)) {
      output_->emitRecordAttributes(*a);
    }
  }
}

void WatermarkAssignerOperator::processWatermark(runtime::Watermark mark) {
  // Upstream watermarks are ignored; only the end-of-input MAX watermark passes.
  if (mark.timestamp == runtime::Watermark::kMaxTimestamp) emitMax();
}

void WatermarkAssignerOperator::endInput() { emitMax(); }

void WatermarkAssignerOperator::emitMax() {
  if (current_watermark_ != runtime::Watermark::kMaxTimestamp) {
    if (status_ == runtime::WatermarkStatus::kIdle) emitStatus(runtime::WatermarkStatus::kActive);
    current_watermark_ = runtime::Watermark::kMaxTimestamp;
    last_watermark_ = current_watermark_;
    output_->emitWatermark(runtime::Watermark{runtime::Watermark::kMaxTimestamp});
  }
  // The final watermark ends the lag (FLIP-328): a finished input processes no backlog.
  if (auto a = backlog_.endOfInput()) output_->emitRecordAttributes(*a);
}

int64_t maxWatermarkOf(const types::Column& rowtime, const types::Column& watermark, int64_t current,
                       const types::RowBatch* rows) {
  const size_t n = rowtime.size();
  for (size_t r = 0; r < n; ++r) {
    if (rowtime.isNull(r)) {
      std::string where;
      if (rows != nullptr && r < rows->numRows()) {
        where = " The row time is NULL in the row ";
        types::formatRow(*rows, r, where);
      }
      throw UserError("RowTime field should not be null, please convert it to a non-null long value." + where);
    }
    if (!watermark.isNull(r)) current = std::max(current, watermark.getLong(r));
  }
  return current;
}

RowtimeWatermarkGenerator::RowtimeWatermarkGenerator(types::RowType source_type, ExprPtr rowtime, ExprPtr watermark) {
  SLUICE_USER_CHECK(rowtime && watermark, "watermark push-down without a row-time or watermark expression");
  program_ = std::make_unique<CalcProgram>(std::move(source_type), nullptr,
                                           std::vector<ExprPtr>{std::move(rowtime), std::move(watermark)},
                                           std::vector<std::string>{"$rowtime", "$watermark"});
}

RowtimeWatermarkGenerator::~RowtimeWatermarkGenerator() = default;

std::optional<int64_t> RowtimeWatermarkGenerator::evaluate(const RowBatch& batch) const {
  if (batch.numRows() == 0) return std::nullopt;
  RowBatch out = program_->apply(RowBatch(batch));
  const types::Column& wm = out.column(1);
  SLUICE_CHECK(wm.type().isInt64Backed() && out.column(0).type().isInt64Backed(),
               "watermark push-down: row-time {} and watermark {} must hold ms values", out.column(0).type().toString(),
               wm.type().toString());
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  const int64_t max = maxWatermarkOf(out.column(0), wm, kNone, &batch);
  if (max == kNone) return std::nullopt;
  return max;
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeWatermarkAssignerFactory(int rowtime_index,
                                                                                    int watermark_index,
                                                                                    std::vector<int> output_columns) {
  WatermarkAssignerOperator probe(rowtime_index, watermark_index, output_columns);
  return runtime::makeOperatorFactory([rowtime_index, watermark_index, output_columns = std::move(output_columns)] {
    return std::make_unique<WatermarkAssignerOperator>(rowtime_index, watermark_index, output_columns);
  });
}

}  // namespace sluice::table

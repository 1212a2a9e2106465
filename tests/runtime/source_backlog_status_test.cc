// SourceBacklogStatus: FLIP-328's watermark-lag rule ORed with FLIP-309's enumerator status, on a clock given
// by hand (all values in ms, worked out from the threshold of 60 000).
#include "runtime/operators/source_backlog_status.h"

#include <gtest/gtest.h>

#include "runtime/operators/stream_operator.h"

namespace sluice::runtime {
namespace {

constexpr RecordAttributes kBacklog{true};
constexpr RecordAttributes kNotBacklog{false};

TEST(SourceBacklogStatusTest, TheLagCrossesTheThresholdBothWaysAndThenDecidesNothing) {
  SourceBacklogStatus s(60'000);
  // Lag 3 600 000 > 60 000: backlog (the first watermark defines the status).
  EXPECT_EQ(s.onWatermark(1'000, 3'601'000), kBacklog);
  // Still far behind: no change, nothing to emit.
  EXPECT_EQ(s.onWatermark(2'000, 3'601'500), std::nullopt);
  // Lag exactly 60 000 is not above the threshold: not backlog.
  EXPECT_EQ(s.onWatermark(3'541'500, 3'601'500), kNotBacklog);
  // A later large lag does not bring backlog back (FLIP-328 never switches false -> true).
  EXPECT_EQ(s.onWatermark(3'541'600, 9'999'999), std::nullopt);
  EXPECT_EQ(s.emitted(), false);
}

TEST(SourceBacklogStatusTest, AFirstWatermarkOnTimeAnnouncesNotBacklog) {
  SourceBacklogStatus s(60'000);
  EXPECT_EQ(s.emitted(), std::nullopt);
  EXPECT_EQ(s.onWatermark(100'000, 100'500), kNotBacklog);
}

TEST(SourceBacklogStatusTest, WithoutAThresholdOnlyTheEnumeratorDecides) {
  SourceBacklogStatus s;
  EXPECT_EQ(s.onWatermark(0, 1'000'000'000), std::nullopt);
  EXPECT_EQ(s.setProcessingBacklog(true), kBacklog);
  EXPECT_EQ(s.setProcessingBacklog(true), std::nullopt);
  EXPECT_EQ(s.setProcessingBacklog(false), kNotBacklog);
}

TEST(SourceBacklogStatusTest, TheStrategiesAreOred) {
  SourceBacklogStatus s(60'000);
  EXPECT_EQ(s.setProcessingBacklog(true), kBacklog);
  EXPECT_EQ(s.onWatermark(0, 1'000'000), std::nullopt);       // lag says backlog too
  EXPECT_EQ(s.setProcessingBacklog(false), std::nullopt);     // the lag still says backlog
  EXPECT_EQ(s.onWatermark(999'000, 1'000'000), kNotBacklog);  // lag 1 000: neither
  EXPECT_EQ(s.setProcessingBacklog(true), kBacklog);          // the enumerator may switch back
}

TEST(SourceBacklogStatusTest, TheThresholdMustBePositive) {
  Configuration c;
  try {
    c.set("pipeline.backlog.watermark-lag-threshold", "0 ms");
    (void)SourceBacklogStatus::fromConfiguration(c);
    FAIL() << "a zero threshold was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline.backlog.watermark-lag-threshold"), std::string::npos) << e.what();
  }
  c.set("pipeline.backlog.watermark-lag-threshold", "2 min");
  SourceBacklogStatus s = SourceBacklogStatus::fromConfiguration(c);
  EXPECT_TRUE(s.lagEnabled());
  EXPECT_EQ(s.onWatermark(0, 120'001), kBacklog);
}

TEST(SourceBacklogStatusTest, AnOperatorsStatusShowsInItsBacklogGauge) {
  Configuration c;
  c.set("pipeline.backlog.watermark-lag-threshold", "1 min");
  OperatorMetrics metrics;
  OperatorContext ctx;
  ctx.config = &c;
  ctx.metrics = &metrics;
  SourceBacklogStatus s = SourceBacklogStatus::forOperator(ctx);
  EXPECT_EQ(metrics.backlog.load(), 0);
  EXPECT_EQ(s.onWatermark(0, 60'001), kBacklog);  // lag 60 001 > 60 000
  EXPECT_EQ(metrics.backlog.load(), 1);
  EXPECT_EQ(s.onWatermark(1'000, 61'000), kNotBacklog);  // lag 60 000: not above
  EXPECT_EQ(metrics.backlog.load(), 0);
  EXPECT_EQ(s.setProcessingBacklog(true), kBacklog);  // the enumerator path sets it too
  EXPECT_EQ(metrics.backlog.load(), 1);
}

}  // namespace
}  // namespace sluice::runtime

#include "test_functions.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/serialization/type_traits.h"
#include "table/functions/aggregate_function.h"

namespace sluice::sqltest {

struct WeightedSum {
  int64_t sum = 0;     // SUM(v * w)
  int64_t weight = 0;  // SUM(w)
};
SLUICE_TYPE(WeightedSum, sum, weight)

namespace {

std::optional<double> weightedAverage(const WeightedSum& a) {
  if (a.weight == 0) return std::nullopt;
  return static_cast<double>(a.sum) / static_cast<double>(a.weight);
}

// Declares a NOT NULL BIGINT result and then gives NULL: the runtime must refuse it, not write a NULL into
// a NOT NULL column.
class NullInNotNull final : public table::AggregateFunction {
 public:
  types::LogicalType inferType(std::vector<types::LogicalType>&) const override {
    return types::LogicalType::bigint(false);
  }
  std::unique_ptr<table::AggregateAccumulator> createAccumulator() const override {
    return std::make_unique<table::AggregateAccumulator>();
  }
  void accumulate(table::AggregateAccumulator&, const table::FunctionArgs&) const override {}
  bool getValue(const table::AggregateAccumulator&, table::FunctionResult&) const override { return false; }
  void serialize(const table::AggregateAccumulator&, std::string&) const override {}
  std::unique_ptr<table::AggregateAccumulator> deserialize(std::string_view) const override {
    return std::make_unique<table::AggregateAccumulator>();
  }
};

}  // namespace

void registerTestFunctions() {
  table::registerFunctionClass("sluice.test.udf.WeightedAvg", [] {
    return table::makeAggregateFunction<WeightedSum>(
        [](WeightedSum& a, int64_t v, int32_t w) {
          a.sum += v * w;
          a.weight += w;
        },
        [](const WeightedSum& a) { return weightedAverage(a); },
        [](WeightedSum& a, int64_t v, int32_t w) {
          a.sum -= v * w;
          a.weight -= w;
        },
        [](WeightedSum& a, const WeightedSum& b) {
          a.sum += b.sum;
          a.weight += b.weight;
        });
  });
  table::registerFunctionClass("sluice.test.udf.WeightedAvgInsertOnly", [] {
    return table::makeAggregateFunction<WeightedSum>(
        [](WeightedSum& a, int64_t v, int32_t w) {
          a.sum += v * w;
          a.weight += w;
        },
        [](const WeightedSum& a) { return weightedAverage(a); });
  });
  table::registerFunctionClass("sluice.test.udf.Collect", [] {
    using Values = std::vector<std::string>;
    return table::makeAggregateFunction<Values>(
        [](Values& a, std::string_view s) { a.emplace_back(s); },
        [](const Values& a) {
          Values sorted = a;
          std::sort(sorted.begin(), sorted.end());
          std::string out;
          for (size_t i = 0; i < sorted.size(); ++i) out += (i > 0 ? "|" : "") + sorted[i];
          return out;
        },
        [](Values& a, std::string_view s) {
          auto it = std::find(a.begin(), a.end(), s);
          if (it != a.end()) a.erase(it);
        },
        [](Values& a, const Values& b) { a.insert(a.end(), b.begin(), b.end()); });
  });
  table::registerFunctionClass("sluice.test.udf.NullInNotNull",
                                [] { return std::make_shared<const NullInNotNull>(); });
  table::registerFunctionClass("sluice.test.udf.Unlucky", [] {
    return table::makeAggregateFunction<int64_t>(
        [](int64_t& n, int32_t v) {
          if (v == 13) throw std::runtime_error("13 is unlucky");
          ++n;
        },
        [](const int64_t& n) { return n; });
  });
}

}  // namespace sluice::sqltest

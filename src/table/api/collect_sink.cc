#include "table/api/collect_sink.h"

namespace sluice::table {

namespace {
class CollectSinkOperator : public runtime::StreamOperator {
 public:
  CollectSinkOperator(types::RowType type, CollectCallback callback)
      : type_(std::move(type)), callback_(std::move(callback)) {}
  void processBatch(types::RowBatch&& batch) override {
    if (!batch.empty() && callback_) callback_(type_, batch);
  }

 private:
  types::RowType type_;
  CollectCallback callback_;
};

class CollectSinkFactory : public runtime::StreamOperatorFactory {
 public:
  CollectSinkFactory(types::RowType type, CollectCallback callback)
      : type_(std::move(type)), callback_(std::move(callback)) {}
  std::unique_ptr<runtime::StreamOperator> createOperator() const override {
    return std::make_unique<CollectSinkOperator>(type_, callback_);
  }

 private:
  types::RowType type_;
  CollectCallback callback_;
};
}  // namespace

std::shared_ptr<const runtime::StreamOperatorFactory> makeCollectSinkFactory(types::RowType type,
                                                                             CollectCallback callback) {
  return std::make_shared<CollectSinkFactory>(std::move(type), std::move(callback));
}

}  // namespace sluice::table

#include "runtime/network/stream_element_codec.h"

#include "common/error.h"
#include "runtime/operators/stream_operator.h"

namespace sluice::runtime::network {

namespace {

constexpr char kRowBatchRecord = 1;
constexpr char kObjectBatchRecord = 2;

const StreamOperatorFactory* streamFactory(const graph::ChainedOperator& op) {
  return dynamic_cast<const StreamOperatorFactory*>(op.factory.get());
}

}  // namespace

std::shared_ptr<const ObjectBatchSerializer> edgeRecordSerializer(const graph::JobGraph& job, int edge) {
  SLUICE_CHECK(edge >= 0 && static_cast<size_t>(edge) < job.edges.size(), "edge {} outside the job", edge);
  const graph::JobEdge& e = job.edges[static_cast<size_t>(edge)];
  const graph::JobVertex& source = job.vertices[static_cast<size_t>(e.source_vertex)];
  const graph::JobVertex& target = job.vertices[static_cast<size_t>(e.target_vertex)];
  const graph::ChainedOperator& producer = source.operators[static_cast<size_t>(e.source_operator)];
  const graph::ChainedOperator& consumer = target.operators.front();
  const StreamOperatorFactory* producer_factory = streamFactory(producer);
  if (producer_factory == nullptr) return nullptr;
  const StreamOperatorFactory* consumer_factory = streamFactory(consumer);
  const int tag = consumer_factory == nullptr ? 0 : consumer_factory->inputTag(e.source_node_id);
  std::shared_ptr<const ObjectBatchSerializer> serializer = producer_factory->outputSerializer(tag);
  if (serializer != nullptr && !serializer->isSerializable()) {
    const std::string type = serializer->typeName();
    throw UserError(fmt::format(
        "Records of type '{}' go from '{}' to '{}' over a {} exchange, so they must be serialized, but '{}' has no "
        "TypeSerializer. Declare the fields of every struct in it after its definition, e.g. SLUICE_TYPE({}, "
        "field1, field2) (see runtime/serialization/type_traits.h), or specialize sluice::runtime::TypeSerializer "
        "for it; records passed between chained operators need none",
        type, producer.name, consumer.name, graph::shipStrategyName(e.partitioner.strategy), type, type));
  }
  return serializer;
}

bool StreamElementSerializer::write(const StreamElement& element, SpanningRecordSerializer& out) {
  if (const auto* rows = std::get_if<types::RowBatch>(&element)) {
    scratch_.assign(1, kRowBatchRecord);
    rows->serialize(scratch_);
    out.writeRecord(scratch_);
    return true;
  }
  if (const auto* objects = std::get_if<ObjectBatchPtr>(&element)) {
    SLUICE_CHECK(objects_ != nullptr, "an object batch on an edge without a record serializer");
    scratch_.assign(1, kObjectBatchRecord);
    objects_->serialize(**objects, scratch_);
    out.writeRecord(scratch_);
    return true;
  }
  if (const auto* mark = std::get_if<Watermark>(&element)) {
    out.writeEvent(NetworkEvent{NetworkEventType::kWatermark, mark->timestamp, {}});
  } else if (const auto* status = std::get_if<WatermarkStatus>(&element)) {
    out.writeEvent(NetworkEvent{NetworkEventType::kWatermarkStatus, static_cast<int64_t>(*status), {}});
  } else {
    out.writeEvent(NetworkEvent{NetworkEventType::kEndOfPartition, 0, {}});
  }
  return false;
}

StreamElement StreamElementDeserializer::decodeRecord(std::string_view bytes) const {
  if (bytes.empty()) throw InputError("empty record in a network buffer");
  const char kind = bytes.front();
  bytes.remove_prefix(1);
  if (kind == kRowBatchRecord) {
    std::string_view data = bytes;
    types::RowBatch batch = types::RowBatch::deserialize(data);
    if (!data.empty()) throw InputError(fmt::format("{} trailing bytes after a row batch record", data.size()));
    return batch;
  }
  if (kind == kObjectBatchRecord) {
    if (objects_ == nullptr) throw InputError("an object batch record on an edge that carries rows");
    return objects_->deserialize(bytes);
  }
  throw InputError(fmt::format("unknown record kind {} in a network buffer", static_cast<int>(kind)));
}

StreamElement StreamElementDeserializer::decodeEvent(const Buffer& buffer) const {
  SLUICE_CHECK(!records_.hasUnfinishedData(), "an event buffer inside a record");
  const NetworkEvent event = EventSerializer::fromBuffer(buffer);
  switch (event.type) {
    case NetworkEventType::kWatermark:
      return Watermark{event.value};
    case NetworkEventType::kWatermarkStatus:
      if (event.value != 0 && event.value != 1) {
        throw InputError(fmt::format("watermark status event with value {} (0 = ACTIVE, 1 = IDLE)", event.value));
      }
      return event.value == 1 ? WatermarkStatus::kIdle : WatermarkStatus::kActive;
    case NetworkEventType::kEndOfPartition:
      return EndOfPartition{};
    default:
      throw InputError(
          fmt::format("unexpected network event of type {} in a channel's data", static_cast<int>(event.type)));
  }
}

}  // namespace sluice::runtime::network

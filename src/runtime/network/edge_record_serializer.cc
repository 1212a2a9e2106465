// edgeRecordSerializer (declared in stream_element_codec.h): kept apart from the codec so that the codec
// links without the graph and operator modules (the fuzz targets build it alone).
#include "common/error.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/operators/stream_operator.h"

namespace sluice::runtime::network {
namespace {

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

}  // namespace sluice::runtime::network

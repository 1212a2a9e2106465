#pragma once
/// ObjectBatchSerializer: the byte form of a batch of DataStream records of one C++ type, as it crosses
/// the network between tasks (Flink's TypeSerializer applied to the records of a buffer). The record type
/// is erased so channels and partitions handle every edge alike; both ends of an edge use the serializer
/// of the type that flows on it (the producer's output type, see StreamOperatorFactory::outputSerializer).
///
/// Byte layout: i32 output tag (little endian), then serializeBatch<T> (varint count, per record its i64
/// timestamp and TypeSerializer<T> bytes). Chained operators never use it: they pass the objects.
///
/// Threading: serializers are immutable; every method is const and thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

#include "runtime/object_batch.h"
#include "runtime/serialization/type_serializer.h"

namespace sluice::runtime {

/// The readable (demangled) name of a C++ type, e.g. "std::pair<int, Flight>".
std::string readableTypeName(const std::type_info& type);

/// Serializes batches of one record type (see the file comment).
class ObjectBatchSerializer {
 public:
  virtual ~ObjectBatchSerializer() = default;
  /// The record type's name for messages: the SLUICE_TYPE name or the demangled C++ name.
  virtual std::string typeName() const = 0;
  /// False when the record type has no TypeSerializer (hasTypeSerializer): serialize and deserialize then
  /// throw InternalError, and a job whose records of this type cross the network fails at submission.
  virtual bool isSerializable() const = 0;
  /// Appends the bytes of `batch` (whose records must be of this serializer's type) to `out`.
  virtual void serialize(const ObjectBatch& batch, std::string& out) const = 0;
  /// Rebuilds a batch from exactly the bytes serialize wrote. Throws InputError on malformed, truncated
  /// or trailing bytes (they come from the network or a spill file).
  virtual ObjectBatchPtr deserialize(std::string_view bytes) const = 0;
};

/// The ObjectBatchSerializer of records of type T.
template <typename T>
class TypedObjectBatchSerializer final : public ObjectBatchSerializer {
 public:
  std::string typeName() const override {
    if constexpr (DeclaredType<T>) {
      return sluiceTypeName(static_cast<const T*>(nullptr));
    } else {
      return readableTypeName(typeid(T));
    }
  }
  bool isSerializable() const override { return hasTypeSerializer<T>(); }
  void serialize(const ObjectBatch& batch, std::string& out) const override {
    if constexpr (hasTypeSerializer<T>()) {
      const int32_t tag = batch.tag();
      DataOutputView view(out);
      view.writeBytes(&tag, sizeof(tag));
      serializeBatch(batch.as<T>(), view);
    } else {
      (void)batch;
      (void)out;
      SLUICE_CHECK(false, "records of type {} have no TypeSerializer", typeName());
    }
  }
  ObjectBatchPtr deserialize(std::string_view bytes) const override {
    if constexpr (hasTypeSerializer<T>()) {
      DataInputView in(bytes);
      int32_t tag;
      in.readBytes(&tag, sizeof(tag));
      if (tag < 0) throw InputError(fmt::format("object batch of {} with negative output tag {}", typeName(), tag));
      auto batch = deserializeBatch<T>(in);
      if (!in.atEnd()) {
        throw InputError(fmt::format("object batch of {}: {} trailing bytes after {} records", typeName(),
                                     bytes.size() - in.position(), batch->size()));
      }
      batch->setTag(tag);
      return batch;
    } else {
      (void)bytes;
      SLUICE_CHECK(false, "records of type {} have no TypeSerializer", typeName());
    }
  }
};

/// The shared serializer of records of type T (one instance per T).
template <typename T>
std::shared_ptr<const ObjectBatchSerializer> objectBatchSerializer() {
  static const std::shared_ptr<const ObjectBatchSerializer> instance =
      std::make_shared<TypedObjectBatchSerializer<T>>();
  return instance;
}

}  // namespace sluice::runtime

#pragma once
/// TypeSerializer<T>: the binary form of DataStream records for the network stack and state snapshots
/// (Flink's TypeSerializer). Built in for arithmetic types and enums (fixed width, little-endian host
/// order), std::string (varint length + bytes), std::pair / std::tuple (fields in order), std::optional
/// (1 presence byte + value), std::vector (varint count + elements), and structs declared with SLUICE_TYPE
/// (fields in declaration order). The format is not self-describing: reader and writer agree on T.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <tuple>
#include <utility>
#include <vector>

#include "common/error.h"
#include "runtime/object_batch.h"
#include "runtime/serialization/type_traits.h"

namespace sluice::runtime {

/// Appends bytes to a string buffer. Not thread-safe.
class DataOutputView {
 public:
  explicit DataOutputView(std::string& buffer) : buffer_(buffer) {}
  void writeBytes(const void* data, size_t n) { buffer_.append(static_cast<const char*>(data), n); }
  /// LEB128 unsigned varint.
  void writeVarUint(uint64_t v) {
    while (v >= 0x80) {
      buffer_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    buffer_.push_back(static_cast<char>(v));
  }
  size_t size() const { return buffer_.size(); }

 private:
  std::string& buffer_;
};

/// Reads bytes written by DataOutputView. Throws InputError on truncated or malformed input (bytes are
/// untrusted: they come from the network or a checkpoint file).
class DataInputView {
 public:
  explicit DataInputView(std::string_view data) : data_(data) {}
  void readBytes(void* out, size_t n) {
    if (n > data_.size() - pos_) {
      throw InputError(fmt::format("record bytes truncated: need {} bytes at offset {}, {} left", n, pos_,
                                   data_.size() - pos_));
    }
    std::memcpy(out, data_.data() + pos_, n);
    pos_ += n;
  }
  uint64_t readVarUint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      readBytes(&b, 1);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    throw InputError(fmt::format("malformed varint at offset {}", pos_));
  }
  /// A length read from the input, checked against the bytes left (each element takes >= `min_bytes`).
  size_t readLength(size_t min_bytes) {
    const uint64_t n = readVarUint();
    if (min_bytes > 0 && n > (data_.size() - pos_) / min_bytes) {
      throw InputError(fmt::format("record length {} at offset {} exceeds the {} bytes left", n, pos_,
                                   data_.size() - pos_));
    }
    return static_cast<size_t>(n);
  }
  bool atEnd() const { return pos_ == data_.size(); }
  size_t position() const { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

/// Serializes and deserializes values of T (static functions; stateless, any thread). A type without
/// a serializer fails to compile with "no TypeSerializer for this type: declare it with SLUICE_TYPE".
/// Users may specialize TypeSerializer<T> for their own types (same two static functions).
template <typename T>
struct TypeSerializer {
  /// Marks the built-in serializer (a user specialization has no such member; see hasTypeSerializer).
  static constexpr bool kBuiltIn = true;

  static void serialize(const T& v, DataOutputView& out) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      out.writeBytes(&v, sizeof(T));
    } else if constexpr (std::is_same_v<T, std::string>) {
      out.writeVarUint(v.size());
      out.writeBytes(v.data(), v.size());
    } else if constexpr (IsPair<T>::value) {
      TypeSerializer<typename T::first_type>::serialize(v.first, out);
      TypeSerializer<typename T::second_type>::serialize(v.second, out);
    } else if constexpr (IsTuple<T>::value) {
      std::apply([&](const auto&... e) { (TypeSerializer<std::decay_t<decltype(e)>>::serialize(e, out), ...); }, v);
    } else if constexpr (IsOptional<T>::value) {
      const uint8_t present = v.has_value() ? 1 : 0;
      out.writeBytes(&present, 1);
      if (v) TypeSerializer<typename T::value_type>::serialize(*v, out);
    } else if constexpr (IsVector<T>::value) {
      out.writeVarUint(v.size());
      for (const auto& e : v) TypeSerializer<typename T::value_type>::serialize(e, out);
    } else if constexpr (DeclaredType<T>) {
      forEachField(v, [&](const char*, const auto& f) { TypeSerializer<std::decay_t<decltype(f)>>::serialize(f, out); });
    } else {
      static_assert(sizeof(T) == 0, "no TypeSerializer for this type: declare it with SLUICE_TYPE");
    }
  }

  static T deserialize(DataInputView& in) {
    if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
      T v;
      in.readBytes(&v, sizeof(T));
      if constexpr (std::is_same_v<T, bool>) {
        // Only 0 and 1 are valid bools; normalise anything else read from untrusted bytes.
        uint8_t raw;
        std::memcpy(&raw, &v, 1);
        v = raw != 0;
      }
      return v;
    } else if constexpr (std::is_same_v<T, std::string>) {
      const size_t n = in.readLength(1);
      std::string s(n, '\0');
      in.readBytes(s.data(), n);
      return s;
    } else if constexpr (IsPair<T>::value) {
      auto a = TypeSerializer<typename T::first_type>::deserialize(in);
      auto b = TypeSerializer<typename T::second_type>::deserialize(in);
      return T(std::move(a), std::move(b));
    } else if constexpr (IsTuple<T>::value) {
      return deserializeTuple(in, std::make_index_sequence<std::tuple_size_v<T>>());
    } else if constexpr (IsOptional<T>::value) {
      uint8_t present;
      in.readBytes(&present, 1);
      if (present == 0) return T();
      if (present != 1) throw InputError(fmt::format("bad optional marker {} at offset {}", present, in.position()));
      return T(TypeSerializer<typename T::value_type>::deserialize(in));
    } else if constexpr (IsVector<T>::value) {
      const size_t n = in.readLength(0);
      T v;
      for (size_t i = 0; i < n; ++i) {
        if (in.atEnd()) throw InputError(fmt::format("vector of {} elements truncated after {}", n, i));
        v.push_back(TypeSerializer<typename T::value_type>::deserialize(in));
      }
      return v;
    } else if constexpr (DeclaredType<T>) {
      T v{};
      forEachField(v, [&](const char*, auto& f) { f = TypeSerializer<std::decay_t<decltype(f)>>::deserialize(in); });
      return v;
    } else {
      static_assert(sizeof(T) == 0, "no TypeSerializer for this type: declare it with SLUICE_TYPE");
    }
  }

 private:
  template <size_t... I>
  static T deserializeTuple(DataInputView& in, std::index_sequence<I...>) {
    // Braced initialisation evaluates the fields left to right.
    return T{TypeSerializer<std::tuple_element_t<I, T>>::deserialize(in)...};
  }
};

template <typename T>
constexpr bool hasTypeSerializer();

namespace detail {
template <typename F>
struct FieldType;
template <typename C, typename M>
struct FieldType<FieldRef<C, M>> {
  using type = M;
};
template <typename Tuple, size_t... I>
constexpr bool allFieldsSerializable(std::index_sequence<I...>) {
  return (hasTypeSerializer<typename FieldType<std::tuple_element_t<I, Tuple>>::type>() && ...);
}
template <typename Tuple, size_t... I>
constexpr bool allElementsSerializable(std::index_sequence<I...>) {
  return (hasTypeSerializer<std::tuple_element_t<I, Tuple>>() && ...);
}
}  // namespace detail

/// True when TypeSerializer<T> can serialize T: a built-in shape whose parts all have serializers, a
/// SLUICE_TYPE struct whose fields all have serializers, or a user specialization of TypeSerializer<T>.
/// Lets the API accept any copyable record type and fail only when a record must cross the network
/// (Flink's TypeInformation is needed for every exchange, not inside a chain).
template <typename T>
constexpr bool hasTypeSerializer() {
  if constexpr (!requires { TypeSerializer<T>::kBuiltIn; }) {
    return true;
  } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::string>) {
    return true;
  } else if constexpr (IsPair<T>::value) {
    return hasTypeSerializer<typename T::first_type>() && hasTypeSerializer<typename T::second_type>();
  } else if constexpr (IsTuple<T>::value) {
    return detail::allElementsSerializable<T>(std::make_index_sequence<std::tuple_size_v<T>>());
  } else if constexpr (IsOptional<T>::value || IsVector<T>::value) {
    return hasTypeSerializer<typename T::value_type>();
  } else if constexpr (DeclaredType<T>) {
    using Fields = decltype(declaredFields<T>());
    return detail::allFieldsSerializable<Fields>(std::make_index_sequence<std::tuple_size_v<Fields>>());
  } else {
    return false;
  }
}

/// Writes a batch of T: record count, then per record its timestamp and value.
template <typename T>
void serializeBatch(const TypedObjectBatch<T>& batch, DataOutputView& out) {
  out.writeVarUint(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const int64_t ts = batch.timestamp(i);
    out.writeBytes(&ts, sizeof(ts));
    TypeSerializer<T>::serialize(batch.value(i), out);
  }
}

/// Reads a batch written by serializeBatch. Throws InputError on malformed bytes.
template <typename T>
std::unique_ptr<TypedObjectBatch<T>> deserializeBatch(DataInputView& in) {
  auto batch = makeObjectBatch<T>();
  const size_t n = in.readLength(sizeof(int64_t));
  batch->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t ts;
    in.readBytes(&ts, sizeof(ts));
    batch->add(TypeSerializer<T>::deserialize(in), ts);
  }
  return batch;
}

}  // namespace sluice::runtime

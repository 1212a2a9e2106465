#pragma once
/// Compile-time descriptions of DataStream record types: which standard shapes a type has (pair, tuple,
/// optional, vector) and the one-line declaration that describes a user struct's fields:
///
///     struct Flight { std::string airline; int64_t delay; };
///     SLUICE_TYPE(Flight, airline, delay)   // at namespace scope, in Flight's namespace
///
/// The declaration gives the struct a TypeSerializer, stable key hashing (so it can be a key) and
/// Flink-like printing ("Flight{airline=AA, delay=3}"). Up to 16 fields.

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace sluice::runtime {

template <typename T>
struct IsPair : std::false_type {};
template <typename A, typename B>
struct IsPair<std::pair<A, B>> : std::true_type {};

template <typename T>
struct IsTuple : std::false_type {};
template <typename... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <typename T>
struct IsVector : std::false_type {};
template <typename T, typename A>
struct IsVector<std::vector<T, A>> : std::true_type {};

/// A named member of a declared struct.
template <typename C, typename M>
struct FieldRef {
  const char* name;
  M C::*member;
};

/// True for types declared with SLUICE_TYPE (found by argument-dependent lookup).
template <typename T>
concept DeclaredType = requires(const T* p) {
  sluiceTypeFields(p);
  sluiceTypeName(p);
};

/// The FieldRef tuple of a declared type.
template <DeclaredType T>
constexpr auto declaredFields() {
  return sluiceTypeFields(static_cast<const T*>(nullptr));
}

/// Calls fn(name, value) for every declared field of `v`, in declaration order.
template <DeclaredType T, typename Fn>
void forEachField(const T& v, Fn&& fn) {
  std::apply([&](const auto&... f) { (fn(f.name, v.*(f.member)), ...); }, declaredFields<T>());
}
/// Mutable version (deserialization).
template <DeclaredType T, typename Fn>
void forEachField(T& v, Fn&& fn) {
  std::apply([&](const auto&... f) { (fn(f.name, v.*(f.member)), ...); }, declaredFields<T>());
}

}  // namespace sluice::runtime

// Preprocessor helpers for SLUICE_TYPE: apply a macro to each of up to 16 arguments.
#define SLUICE_PP_NARG(...) SLUICE_PP_NARG_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define SLUICE_PP_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
#define SLUICE_PP_CAT(a, b) SLUICE_PP_CAT_(a, b)
#define SLUICE_PP_CAT_(a, b) a##b
#define SLUICE_PP_F1(M, T, x) M(T, x)
#define SLUICE_PP_F2(M, T, x, ...) M(T, x), SLUICE_PP_F1(M, T, __VA_ARGS__)
#define SLUICE_PP_F3(M, T, x, ...) M(T, x), SLUICE_PP_F2(M, T, __VA_ARGS__)
#define SLUICE_PP_F4(M, T, x, ...) M(T, x), SLUICE_PP_F3(M, T, __VA_ARGS__)
#define SLUICE_PP_F5(M, T, x, ...) M(T, x), SLUICE_PP_F4(M, T, __VA_ARGS__)
#define SLUICE_PP_F6(M, T, x, ...) M(T, x), SLUICE_PP_F5(M, T, __VA_ARGS__)
#define SLUICE_PP_F7(M, T, x, ...) M(T, x), SLUICE_PP_F6(M, T, __VA_ARGS__)
#define SLUICE_PP_F8(M, T, x, ...) M(T, x), SLUICE_PP_F7(M, T, __VA_ARGS__)
#define SLUICE_PP_F9(M, T, x, ...) M(T, x), SLUICE_PP_F8(M, T, __VA_ARGS__)
#define SLUICE_PP_F10(M, T, x, ...) M(T, x), SLUICE_PP_F9(M, T, __VA_ARGS__)
#define SLUICE_PP_F11(M, T, x, ...) M(T, x), SLUICE_PP_F10(M, T, __VA_ARGS__)
#define SLUICE_PP_F12(M, T, x, ...) M(T, x), SLUICE_PP_F11(M, T, __VA_ARGS__)
#define SLUICE_PP_F13(M, T, x, ...) M(T, x), SLUICE_PP_F12(M, T, __VA_ARGS__)
#define SLUICE_PP_F14(M, T, x, ...) M(T, x), SLUICE_PP_F13(M, T, __VA_ARGS__)
#define SLUICE_PP_F15(M, T, x, ...) M(T, x), SLUICE_PP_F14(M, T, __VA_ARGS__)
#define SLUICE_PP_F16(M, T, x, ...) M(T, x), SLUICE_PP_F15(M, T, __VA_ARGS__)
#define SLUICE_PP_FOR_EACH(M, T, ...) SLUICE_PP_CAT(SLUICE_PP_F, SLUICE_PP_NARG(__VA_ARGS__))(M, T, __VA_ARGS__)
#define SLUICE_PP_FIELD(T, x) ::sluice::runtime::FieldRef<T, decltype(T::x)>{#x, &T::x}

/// Declares the fields of a user struct `T` (in T's namespace, after its definition), which makes T usable
/// as a DataStream record and key: serialization, stable key hashing and printing.
#define SLUICE_TYPE(T, ...)                                                         \
  [[maybe_unused]] inline auto sluiceTypeFields(const T*) {                          \
    return std::make_tuple(SLUICE_PP_FOR_EACH(SLUICE_PP_FIELD, T, __VA_ARGS__));     \
  }                                                                                  \
  [[maybe_unused]] inline const char* sluiceTypeName(const T*) { return #T; }

#pragma once
/// Text form of DataStream records, as Flink's print sink shows them (Java's toString): numbers in
/// decimal (doubles as Java's Double.toString: "2.0", "1.0E7"), bools "true"/"false", strings as they
/// are, pairs and tuples "(a,b)" (Flink's Tuple2.toString), optionals their value or "null", vectors
/// "[a, b]" (Java's List.toString), SLUICE_TYPE structs "Name{f1=a, f2=b}"; a type with an
/// `operator<<(std::ostream&, const T&)` prints through it.

#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>

#include "runtime/serialization/type_traits.h"
#include "types/value_format.h"

namespace sluice::runtime {

template <typename T>
concept OstreamPrintable = requires(std::ostream& os, const T& v) { os << v; };

/// Appends the text form of `v` to `out`.
template <typename T>
void formatRecord(const T& v, std::string& out) {
  if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, char>) {
    out.push_back(v);
  } else if constexpr (std::is_integral_v<T>) {
    out += std::to_string(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    types::formatDouble(static_cast<double>(v), out);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out += std::string_view(v);
  } else if constexpr (IsPair<T>::value) {
    out.push_back('(');
    formatRecord(v.first, out);
    out.push_back(',');
    formatRecord(v.second, out);
    out.push_back(')');
  } else if constexpr (IsTuple<T>::value) {
    out.push_back('(');
    bool first = true;
    std::apply([&](const auto&... e) { ((out += first ? "" : ",", first = false, formatRecord(e, out)), ...); }, v);
    out.push_back(')');
  } else if constexpr (IsOptional<T>::value) {
    if (v) formatRecord(*v, out);
    else out += "null";
  } else if constexpr (IsVector<T>::value) {
    out.push_back('[');
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out += ", ";
      formatRecord(v[i], out);
    }
    out.push_back(']');
  } else if constexpr (OstreamPrintable<T>) {
    std::ostringstream os;
    os << v;
    out += os.str();
  } else if constexpr (DeclaredType<T>) {
    out += sluiceTypeName(static_cast<const T*>(nullptr));
    out.push_back('{');
    bool first = true;
    forEachField(v, [&](const char* name, const auto& f) {
      if (!first) out += ", ";
      first = false;
      out += name;
      out.push_back('=');
      formatRecord(f, out);
    });
    out.push_back('}');
  } else {
    static_assert(sizeof(T) == 0, "cannot print this type: declare it with SLUICE_TYPE or give it operator<<");
  }
}

/// The text form of `v`.
template <typename T>
std::string recordToString(const T& v) {
  std::string s;
  formatRecord(v, s);
  return s;
}

}  // namespace sluice::runtime

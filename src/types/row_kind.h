#pragma once
/// RowKind: the change a row carries in a changelog (Flink's org.apache.flink.types.RowKind).

#include <cstdint>
#include <string_view>

namespace sluice::types {

enum class RowKind : uint8_t {
  kInsert = 0,        ///< +I
  kUpdateBefore = 1,  ///< -U: retracts the previous version of an updated row
  kUpdateAfter = 2,   ///< +U: the new version of an updated row
  kDelete = 3,        ///< -D
};

/// "+I", "-U", "+U", "-D" (Flink's RowKind.shortString()).
inline std::string_view shortString(RowKind k) {
  switch (k) {
    case RowKind::kInsert: return "+I";
    case RowKind::kUpdateBefore: return "-U";
    case RowKind::kUpdateAfter: return "+U";
    case RowKind::kDelete: return "-D";
  }
  return "?";
}

/// +I and +U add a row to the result; -U and -D take one away.
inline bool isAccumulate(RowKind k) { return k == RowKind::kInsert || k == RowKind::kUpdateAfter; }

}  // namespace sluice::types

#pragma once
/// Module-internal: how the SQL operators of this folder reach the state layer. Other modules must not
/// include this header. Threading: the task thread only.

#include <cstdint>
#include <memory>
#include <string>

#include "common/hash.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/operator_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"

namespace sluice::table::internal {

/// The operator's state context: the task's (`ctx.state`), or, for an operator driven by hand, a fresh
/// private one over key groups [0, ctx.max_parallelism - 1] kept in `owned`, so the operator always
/// works through the state layer.
inline runtime::state::StreamOperatorStateContext& stateContextOf(
    const runtime::OperatorContext& ctx, std::unique_ptr<runtime::state::StreamOperatorStateContext>& owned) {
  if (ctx.state != nullptr) return *ctx.state;
  SLUICE_CHECK(ctx.max_parallelism >= 1, "operator '{}' opened with max parallelism {}", ctx.operator_name,
               ctx.max_parallelism);
  owned = std::make_unique<runtime::state::StreamOperatorStateContext>(
      ctx.uid.empty() ? ctx.operator_name : ctx.uid, runtime::state::KeyGroupRange::of(0, ctx.max_parallelism - 1),
      ctx.max_parallelism, nullptr);
  return *owned;
}

/// The key group of a row whose key hashes to `hash` (runtime::hashKey over the key columns, the hash
/// the HASH exchange in front of the operator used): assignToKeyGroup(hash, maxParallelism).
inline int32_t keyGroupOf(uint64_t hash, const runtime::state::KeyedStateBackend& backend) {
  return assignToKeyGroup(hash, backend.maxParallelism());
}

/// Prefixes an InputError raised while checking restored state with the operator and state it is in.
[[noreturn]] inline void rethrowRestoreError(const runtime::state::StreamOperatorStateContext& sc,
                                             const std::string& state_name, int32_t key_group,
                                             const InputError& e) {
  throw InputError(fmt::format("operator '{}': restored state '{}', key group {}: {}", sc.uid(), state_name,
                               key_group, e.what()));
}

}  // namespace sluice::table::internal

#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/CMakeLists.txt, clang 14, ASan + UBSan) in build/fuzz and runs each for
# a fixed time on a temporary copy of its corpus (fuzz/corpus/<name>), so the repository is never written.
# Exits non-zero when a target fails to build or finds a crash, leak, sanitizer report or timeout; the
# reproducer is kept in build/fuzz/artifacts/.
# Environment: SLUICE_FUZZ_SECONDS (per target, default 20), SLUICE_FUZZ_BUILD_DIR (default build/fuzz).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SLUICE_FUZZ_BUILD_DIR:-$ROOT/build/fuzz}
SECONDS_PER_TARGET=${SLUICE_FUZZ_SECONDS:-20}
CXX=${SLUICE_FUZZ_CXX:-clang++-14}
export CCACHE_BASEDIR=$ROOT
export CCACHE_NOHASHDIR=1

# target name : corpus folder under fuzz/corpus
TARGETS=(sql_parser_fuzz:sql csv_reader_fuzz:csv json_decode_fuzz:json network_frame_fuzz:frames
         stream_element_fuzz:stream_elements)

if ! command -v "$CXX" >/dev/null; then
  echo "fuzz: $CXX not found (scripts/install-deps.sh installs clang-14 and libclang-rt-14-dev)" >&2
  exit 1
fi

present=()
for t in "${TARGETS[@]}"; do
  name=${t%%:*}
  if [ -f "$ROOT/fuzz/$name.cc" ]; then
    present+=("$t")
  else
    echo "fuzz: skipping $name (fuzz/$name.cc does not exist)"
  fi
done
if [ ${#present[@]} -eq 0 ]; then
  echo "fuzz: no fuzz targets"
  exit 0
fi

mkdir -p "$BUILD"
# Reconfigure every time: cheap, and picks up targets whose sources appeared since the last run.
cmake -S "$ROOT/fuzz" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" >"$BUILD/configure.log" 2>&1 || {
  cat "$BUILD/configure.log" >&2
  echo "fuzz: configuring $BUILD failed" >&2
  exit 1
}
names=()
for t in "${present[@]}"; do names+=("${t%%:*}"); done
cmake --build "$BUILD" -j "${SLUICE_FUZZ_JOBS:-2}" --target "${names[@]}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$BUILD/artifacts"

status=0
for t in "${present[@]}"; do
  name=${t%%:*}
  corpus=$WORK/corpus-$name
  mkdir -p "$corpus" "$WORK/artifacts-$name"
  if [ -d "$ROOT/fuzz/corpus/${t##*:}" ]; then
    cp -R "$ROOT/fuzz/corpus/${t##*:}/." "$corpus/"
  fi
  echo "fuzz: running $name for ${SECONDS_PER_TARGET}s on $(find "$corpus" -type f | wc -l) seed inputs"
  set +e
  # -timeout: one input running over 10 s is a hang; -rss_limit_mb bounds memory per input.
  "$BUILD/$name" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$WORK/artifacts-$name/" "$corpus" >"$WORK/$name.log" 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $name FAILED (exit code $rc); log tail:" >&2
    tail -n 60 "$WORK/$name.log" >&2
    cp -R "$WORK/artifacts-$name/." "$BUILD/artifacts/" 2>/dev/null || true
    echo "fuzz: reproducers in $BUILD/artifacts: $(ls "$WORK/artifacts-$name" | tr '\n' ' ')" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$WORK/$name.log" | sed "s/^/fuzz: $name /" || true
    echo "fuzz: $name ok"
  fi
done
exit $status

#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/CMakeLists.txt, clang 14, ASan + UBSan) in build/fuzz and runs each on a
# temporary copy of its corpus (fuzz/corpus/<name>), so the repository is never written.
# By default (`make test`, CI) every target first does the same fixed run: a fixed seed and a fixed number of
# inputs per target (the RUNS column below, about 20 s each on a 2-core machine), so these runs cannot turn red
# by chance and a red one reproduces. Then every target explores briefly from a fresh seed taken from the clock
# (SLUICE_FUZZ_EXPLORE_SECONDS in total, 20 s by default, split evenly across the targets), continuing from the
# corpus its fixed run grew; the seed is printed, and a failure prints the command that replays it (the same
# fixed runs, then the same exploration with that seed). SLUICE_FUZZ_EXPLORE_SECONDS=0 skips the exploration.
# With SLUICE_FUZZ_SECONDS set, each target explores for that long from a random seed instead of both.
# Exits non-zero when a target fails to build or finds a crash, leak, sanitizer report or timeout; the
# reproducer is kept in build/fuzz/artifacts/.
# Environment: SLUICE_FUZZ_SECONDS (per target; unset: fixed runs), SLUICE_FUZZ_RUNS (inputs per target, instead
# of the RUNS column), SLUICE_FUZZ_SEED (default 1; random when exploring by time), SLUICE_FUZZ_EXPLORE_SECONDS
# (total over the targets, after the fixed runs; default 20), SLUICE_FUZZ_EXPLORE_SEED (default: from the clock),
# SLUICE_FUZZ_BUILD_DIR (default build/fuzz).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SLUICE_FUZZ_BUILD_DIR:-$ROOT/build/fuzz}
CXX=${SLUICE_FUZZ_CXX:-clang++-14}
export CCACHE_BASEDIR=$ROOT
export CCACHE_NOHASHDIR=1

# target name : corpus folder under fuzz/corpus : RUNS (inputs executed, the seed corpus included)
TARGETS=(sql_parser_fuzz:sql:6000 csv_reader_fuzz:csv:5000 json_decode_fuzz:json:9000
         network_frame_fuzz:frames:40000 stream_element_fuzz:stream_elements:12000
         checkpoint_metadata_fuzz:checkpoint_metadata:300000)

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
# run_target NAME CORPUS WHAT LIBFUZZER-OPTION...: runs NAME on the folder CORPUS (which grows), reports
# and keeps the reproducers of a failure; returns 1 on a failure.
run_target() {
  local name=$1 corpus=$2 what=$3
  shift 3
  local artifacts
  artifacts=$(mktemp -d "$WORK/artifacts-$name.XXXXXX")
  echo "fuzz: running $name $what on $(find "$corpus" -type f | wc -l) seed inputs"
  set +e
  # -timeout: one input running over 10 s is a hang; -rss_limit_mb bounds memory per input.
  "$BUILD/$name" "$@" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$WORK/$name.log" 2>&1
  local rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $name FAILED (exit code $rc); log tail:" >&2
    tail -n 60 "$WORK/$name.log" >&2
    cp -R "$artifacts/." "$BUILD/artifacts/" 2>/dev/null || true
    echo "fuzz: reproducers in $BUILD/artifacts: $(ls "$artifacts" | tr '\n' ' ')" >&2
    return 1
  fi
  grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$WORK/$name.log" | sed "s/^/fuzz: $name /" || true
  echo "fuzz: $name ok"
}

for t in "${present[@]}"; do
  name=${t%%:*}
  rest=${t#*:}
  folder=${rest%%:*}
  corpus=$WORK/corpus-$name
  mkdir -p "$corpus"
  if [ -d "$ROOT/fuzz/corpus/$folder" ]; then
    cp -R "$ROOT/fuzz/corpus/$folder/." "$corpus/"
  fi
  if [ -n "${SLUICE_FUZZ_SECONDS:-}" ]; then
    limit=(-max_total_time="$SLUICE_FUZZ_SECONDS")
    [ -z "${SLUICE_FUZZ_SEED:-}" ] || limit+=(-seed="$SLUICE_FUZZ_SEED")
    what="for ${SLUICE_FUZZ_SECONDS}s"
  else
    runs=${SLUICE_FUZZ_RUNS:-${rest#*:}}
    # -reload=0: no timed re-reading of the corpus folder, whose extra runs would land at a different
    # point of every run.
    limit=(-runs="$runs" -seed="${SLUICE_FUZZ_SEED:-1}" -reload=0)
    what="for $runs inputs (seed ${SLUICE_FUZZ_SEED:-1})"
  fi
  run_target "$name" "$corpus" "$what" "${limit[@]}" || status=1
done

# The exploration after the fixed runs: a fresh seed each time, the same one for every target. Given the seed,
# a target's exploration is the same sequence of inputs (its corpus is what its fixed run left, -reload=0), so
# a finding replays with the printed command; its reproducer is kept in build/fuzz/artifacts/ as well.
explore_total=${SLUICE_FUZZ_EXPLORE_SECONDS:-20}
if [ -z "${SLUICE_FUZZ_SECONDS:-}" ] && [ "$explore_total" -gt 0 ]; then
  per_target=$((explore_total / ${#present[@]}))
  [ "$per_target" -ge 1 ] || per_target=1
  seed=${SLUICE_FUZZ_EXPLORE_SEED:-$(( $(date +%s%N) % 2147483646 + 1 ))}
  replay="SLUICE_FUZZ_EXPLORE_SEED=$seed SLUICE_FUZZ_EXPLORE_SECONDS=$explore_total"
  [ -z "${SLUICE_FUZZ_RUNS:-}" ] || replay+=" SLUICE_FUZZ_RUNS=$SLUICE_FUZZ_RUNS"
  [ -z "${SLUICE_FUZZ_SEED:-}" ] || replay+=" SLUICE_FUZZ_SEED=$SLUICE_FUZZ_SEED"
  echo "fuzz: exploring ${per_target}s per target from seed $seed (replay: $replay bash fuzz/run.sh)"
  for t in "${present[@]}"; do
    name=${t%%:*}
    if ! run_target "$name" "$WORK/corpus-$name" "for ${per_target}s (exploring, seed $seed)" \
        -max_total_time="$per_target" -seed="$seed" -reload=0; then
      echo "fuzz: $name failed while exploring from seed $seed; replay: $replay bash fuzz/run.sh" >&2
      status=1
    fi
  done
fi
exit $status

#!/usr/bin/env bash
# Parallelism test: the main job (examples/flights.sql, as `make run` runs it) at -p 1, -p 2 and -p 4 gives the
# same final results: the hourly rows as a sorted multiset (prefix "hourly> " / "hourly:N> " removed) and the
# per_destination changelog materialized. Also checks the print prefix follows the sink parallelism
# ("hourly> " at 1, "hourly:N> " with 1 <= N <= p above; Flink's PrintSinkOutputWriter).
#   $1 sluice binary, $2 source tree.
source "$(dirname "$0")/lib.sh"

for p in 1 2 4; do
  run_sluice "$E2E_TMP/out.$p" "$E2E_TMP/err.$p" run -p "$p" examples/flights.sql
  expect_success "$E2E_TMP/out.$p" "$E2E_TMP/err.$p"
  if [ "$p" -eq 1 ]; then
    prefix='^hourly> '
  else
    prefix="^hourly:[1-$p]> "
  fi
  bad=$(grep '^hourly' "$E2E_TMP/out.$p" | grep -v -E "$prefix" | head -n 3 || true)
  [ -z "$bad" ] || fail "-p $p: hourly lines without the prefix '$prefix': $bad"
  sink_lines hourly "$E2E_TMP/out.$p" | sort > "$E2E_TMP/hourly.$p"
  sink_lines per_destination "$E2E_TMP/out.$p" | materialize > "$E2E_TMP/per_destination.$p"
  # Not empty: the 4 days have at least one window per airline and ANC has flights.
  [ -s "$E2E_TMP/hourly.$p" ] || fail "-p $p printed no hourly rows"
  [ -s "$E2E_TMP/per_destination.$p" ] || fail "-p $p printed no per_destination rows"
done

for p in 2 4; do
  compare_rows "hourly, -p 1 vs -p $p" "$E2E_TMP/hourly.1" "$E2E_TMP/hourly.$p"
  compare_rows "per_destination, -p 1 vs -p $p" "$E2E_TMP/per_destination.1" "$E2E_TMP/per_destination.$p"
done

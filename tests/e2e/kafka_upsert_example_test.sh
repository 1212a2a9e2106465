#!/usr/bin/env bash
# The upsert-kafka example (examples/kafka/run.sh status) against an awk oracle over the same input file
# (examples/kafka/flight_status.tsv: KEY<TAB>VALUE lines in topic order, an empty VALUE a tombstone).
#   $1 sluice binary, $2 source tree, $3 parallelism (default 2).
# Checks:
#  - the final table is the last value of each key, keys whose last message is a tombstone left out (upsert
#    semantics); the topic `latest_status` the job wrote, compacted the same way, holds exactly those rows;
#  - the per-status counts (GROUP BY status over the upsert source) materialized from the printed changelog
#    equal the counts over that final table;
#  - deletes reach the sink: every deleted key's last message in `latest_status` is a tombstone.
source "$(dirname "$0")/lib.sh"
PARALLELISM=${3:-2}
INPUT=examples/kafka/flight_status.tsv

command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps.sh installs it)"

# --- oracle -----------------------------------------------------------------------------------------------------
# Final table: last value per key; tombstones remove the key.
awk -F'\t' '{ if ($2 == "") delete last[$1]; else last[$1] = $2 } END { for (k in last) print k " " last[k] }' \
  "$INPUT" | sort > "$E2E_TMP/final.expected"
# The input must exercise updates and deletes: 154 keys, 347 messages, 39 tombstones (wc/grep over the file).
[ "$(cut -f1 "$INPUT" | sort -u | wc -l)" -eq 154 ] || fail "unexpected key count in $INPUT"
[ "$(awk -F'\t' '$2 == ""' "$INPUT" | wc -l)" -eq 39 ] || fail "unexpected tombstone count in $INPUT"
[ "$(wc -l < "$E2E_TMP/final.expected")" -eq 115 ] || fail "the oracle's final table should hold 154 - 39 keys"
# Per-status counts over the final table, printed as the print sink's rows.
sed -E 's/.*"status":"([a-z]+)".*/\1/' "$E2E_TMP/final.expected" | sort | uniq -c |
  awk '{ print "+I[" $2 ", " $1 "]" }' | sort > "$E2E_TMP/per_status.expected"

# --- the example ------------------------------------------------------------------------------------------------
set +e
SLUICE=$SLUICE SLUICE_PARALLELISM=$PARALLELISM timeout --kill-after=10 "${SLUICE_TIMEOUT:-300}" \
  bash examples/kafka/run.sh status >"$E2E_TMP/out" 2>"$E2E_TMP/err" </dev/null
RC=$?
set -e
expect_success "$E2E_TMP/out" "$E2E_TMP/err"

sink_lines per_status "$E2E_TMP/out" > "$E2E_TMP/per_status.changelog"
grep -q '^-U\[scheduled, ' "$E2E_TMP/per_status.changelog" || fail "no retraction from 'scheduled' in the changelog"
materialize < "$E2E_TMP/per_status.changelog" > "$E2E_TMP/per_status.actual"
compare_rows "per_status at -p $PARALLELISM" "$E2E_TMP/per_status.expected" "$E2E_TMP/per_status.actual"

# The sink topic, compacted as Kafka would: last message per key, a tombstone removes the key.
sed -n 's/^latest_status> //p' "$E2E_TMP/out" > "$E2E_TMP/latest.messages"
[ -s "$E2E_TMP/latest.messages" ] || fail "run.sh printed no message of topic latest_status"
awk '{ k = $1; v = substr($0, length($1) + 2); if (v == "null") delete last[k]; else last[k] = v }
     END { for (k in last) print k " " last[k] }' "$E2E_TMP/latest.messages" | sort > "$E2E_TMP/final.actual"
compare_rows "latest_status topic at -p $PARALLELISM" "$E2E_TMP/final.expected" "$E2E_TMP/final.actual"
awk -F'\t' '$2 == "" { print $1 }' "$INPUT" | sort -u > "$E2E_TMP/deleted.keys"
awk '{ last[$1] = substr($0, length($1) + 2) } END { for (k in last) if (last[k] == "null") print k }' \
  "$E2E_TMP/latest.messages" | sort > "$E2E_TMP/tombstoned.keys"
diff "$E2E_TMP/deleted.keys" "$E2E_TMP/tombstoned.keys" >&2 || fail "deleted keys do not end with a tombstone"

#!/usr/bin/env bash
# The DataStream examples agree with an independent awk computation over the same CSV.
#   examples_test.sh FLIGHTS_PER_AIRLINE_BIN DELAYS_WINDOW_BIN SOURCE_DIR PARALLELISM
# flights per airline: count of lines per airline (column 5).
# delays window: per airline and hour of the scheduled departure (column 10, HHmm) on the flight's date
# (columns 1-3), the max departure delay (column 12) over flights that have one (cancelled ones do not).
set -euo pipefail
FPA=$1
DW=$2
cd "$3"
P=$4
export LC_ALL=C
CSV=examples/data/flights_2015-01-01_to_04.csv
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-ds-examples.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

timeout 300 "$FPA" -p "$P" "$CSV" >"$TMP/fpa.out" 2>"$TMP/fpa.err" || { cat "$TMP/fpa.err" >&2; exit 1; }
sed -E 's/^[0-9]+> //' "$TMP/fpa.out" | sort >"$TMP/fpa.got"
awk -F, '{ c[$5]++ } END { for (a in c) print "(" a "," c[a] ")" }' "$CSV" | sort >"$TMP/fpa.want"
# 14 airlines (examples/data/README.md); the counts add up to the 55,105 lines.
[ "$(wc -l <"$TMP/fpa.want")" -eq 14 ] || { echo "awk oracle found $(wc -l <"$TMP/fpa.want") airlines" >&2; exit 1; }
diff "$TMP/fpa.got" "$TMP/fpa.want" || { echo "FAIL: flights per airline at -p $P" >&2; exit 1; }
if [ "$P" -gt 1 ]; then
  grep -Eq '^[0-9]+> ' "$TMP/fpa.out" || { echo "FAIL: no subtask prefix at -p $P" >&2; exit 1; }
fi

timeout 300 "$DW" -p "$P" "$CSV" >"$TMP/dw.out" 2>"$TMP/dw.err" || { cat "$TMP/dw.err" >&2; exit 1; }
sed -E 's/^[0-9]+> //' "$TMP/dw.out" | sort >"$TMP/dw.got"
awk -F, '$12 != "" && length($10) == 4 {
  k = sprintf("%s,%04d-%02d-%02dT%s:00", $5, $1, $2, $3, substr($10, 1, 2)); d = $12 + 0
  if (!(k in m) || d > m[k]) m[k] = d
} END { for (k in m) print "(" k "," m[k] ")" }' "$CSV" | sort >"$TMP/dw.want"
diff "$TMP/dw.got" "$TMP/dw.want" || { echo "FAIL: delays window at -p $P" >&2; exit 1; }
echo "examples agree with awk at -p $P"

#!/usr/bin/env bash
# `sluice kafka-mock`: start the mock cluster, load a CSV file (keyed by a column) and a key/value file with a
# tombstone, read both topics back with kcat and compare with the files; the tool stops on SIGINT.
#   $1 sluice binary, $2 source tree.
# Synchronisation: the tool's stdout lines (bootstrap address, then "ready"); no sleeps.
source "$(dirname "$0")/lib.sh"

command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps.sh installs it)"

# A CSV file whose keys repeat (same key -> same partition, in file order), with quoted commas and quotes.
CSV="$E2E_TMP/orders.csv"
cat > "$CSV" <<'EOF'
k1,"a, with comma",1
k2,plain,2
k3,"say ""hi""",3
k1,second for k1,4

k2,second for k2,5
k4,only k4,6
k1,third for k1,7
EOF
# Key/value lines (tab between), the last one a tombstone for k2.
KV="$E2E_TMP/status.tsv"
printf 'k1\t{"s":"boarding"}\nk2\t{"s":"delayed"}\nk1\t{"s":"departed"}\nk2\t\n' > "$KV"

# --- start the tool and wait for its lines ------------------------------------------------------------------
# Each tool runs under `timeout --foreground`: the test stops it with SIGINT sent to `timeout`, which then
# forwards it to the tool only; without --foreground it would also signal its whole process group, so the
# tool would get the signal twice.
exec 3< <(exec timeout --foreground --kill-after=10 "${SLUICE_TIMEOUT:-300}" "$SLUICE" kafka-mock --brokers 2 \
  --topic orders:3 --load orders="$CSV" --key-column 1 2>"$E2E_TMP/mock.err")
MOCK_PID=$!
trap 'kill -INT $MOCK_PID 2>/dev/null || true; rm -rf "$E2E_TMP"' EXIT
BOOTSTRAP=""
while IFS= read -r line <&3; do
  echo "mock: $line"
  case $line in
    bootstrap.servers=*) BOOTSTRAP=${line#bootstrap.servers=} ;;
    ready) break ;;
  esac
done
[ -n "$BOOTSTRAP" ] || { cat "$E2E_TMP/mock.err" >&2; fail "the tool printed no bootstrap.servers line"; }
[ "$line" = ready ] || { cat "$E2E_TMP/mock.err" >&2; fail "the tool ended before 'ready'"; }

# --- metadata: both brokers, the topic with 3 partitions -----------------------------------------------------
kcat -b "$BOOTSTRAP" -L -t orders > "$E2E_TMP/meta" 2>&1 || { cat "$E2E_TMP/meta" >&2; fail "kcat -L failed"; }
grep -q ' 2 brokers:' "$E2E_TMP/meta" || { cat "$E2E_TMP/meta" >&2; fail "kcat -L does not list 2 brokers"; }
grep -q 'topic "orders" with 3 partitions' "$E2E_TMP/meta" || { cat "$E2E_TMP/meta" >&2; fail "orders has no 3 partitions"; }

# --- read back: every non-blank line once, keyed by its first field -----------------------------------------
kcat -b "$BOOTSTRAP" -C -t orders -o beginning -e -q -f '%p\t%o\t%k\t%s\n' > "$E2E_TMP/orders.read" ||
  fail "kcat -C failed"
awk -F, 'NF { print $1 "\t" $0 }' "$CSV" | sort > "$E2E_TMP/orders.expected"
cut -f 3- "$E2E_TMP/orders.read" | sort > "$E2E_TMP/orders.actual"
diff "$E2E_TMP/orders.expected" "$E2E_TMP/orders.actual" >&2 || fail "topic orders differs from $CSV"
# 7 messages (8 lines, one blank).
[ "$(wc -l < "$E2E_TMP/orders.actual")" -eq 7 ] || fail "expected 7 messages"
# Each key in one partition, in file order: the last field counts up through the file.
awk -F'\t' '
  { split($4, f, ","); n = f[length(f)] + 0
    if (($3 in part) && part[$3] != $1) { print "key " $3 " in two partitions"; bad = 1 }
    part[$3] = $1
    if (($1 in last) && n <= last[$1]) { print "partition " $1 " out of file order at " $0; bad = 1 }
    last[$1] = n }
  END { exit bad }' "$E2E_TMP/orders.read" >&2 || fail "per-key order or placement broken"

# --- stop with SIGINT ------------------------------------------------------------------------------------------
kill -INT "$MOCK_PID"
set +e
wait "$MOCK_PID"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$E2E_TMP/mock.err" >&2; fail "the tool exited with $rc on SIGINT"; }
grep -q 'stopping on signal' "$E2E_TMP/mock.err" || fail "no stop message on stderr"

# --- key/value lines with a tombstone, --exit-after-load --------------------------------------------------------
exec 4< <(exec timeout --foreground --kill-after=10 "${SLUICE_TIMEOUT:-300}" "$SLUICE" kafka-mock --load status="$KV" \
  --key-delimiter "$(printf '\t')" --null-empty 2>"$E2E_TMP/mock2.err")
MOCK_PID=$!
BOOTSTRAP=""
while IFS= read -r line <&4; do
  case $line in
    bootstrap.servers=*) BOOTSTRAP=${line#bootstrap.servers=} ;;
    ready) break ;;
  esac
done
[ "$line" = ready ] || { cat "$E2E_TMP/mock2.err" >&2; fail "second run ended before 'ready'"; }
# %S is the value length, -1 for a null value.
kcat -b "$BOOTSTRAP" -C -t status -o beginning -e -q -f '%k|%S|%s\n' > "$E2E_TMP/status.actual" || fail "kcat -C failed"
awk -F'\t' '{ print $1 "|" ($2 == "" ? -1 : length($2)) "|" $2 }' "$KV" > "$E2E_TMP/status.expected"
diff "$E2E_TMP/status.expected" "$E2E_TMP/status.actual" >&2 || fail "topic status differs"
kill -INT "$MOCK_PID"
wait "$MOCK_PID" || fail "second run did not stop cleanly"

# JSON lines keyed by a field: a string key unescaped, a number as its text, a missing field: no key (%K = -1).
JL="$E2E_TMP/events.jsonl"
printf '{"id":"a\\u00e9","n":1}\n{"n":2,"id":7}\n{"n":3}\n' > "$JL"
exec 5< <(exec timeout --foreground --kill-after=10 "${SLUICE_TIMEOUT:-300}" "$SLUICE" kafka-mock --load events="$JL" \
  --key-field id 2>"$E2E_TMP/mock3.err")
MOCK_PID=$!
while IFS= read -r line <&5; do
  case $line in
    bootstrap.servers=*) BOOTSTRAP=${line#bootstrap.servers=} ;;
    ready) break ;;
  esac
done
[ "$line" = ready ] || { cat "$E2E_TMP/mock3.err" >&2; fail "third run ended before 'ready'"; }
kcat -b "$BOOTSTRAP" -C -t events -o beginning -e -q -f '%K|%k|%s\n' > "$E2E_TMP/events.actual" || fail "kcat -C failed"
printf '3|a\xc3\xa9|{"id":"a\\u00e9","n":1}\n1|7|{"n":2,"id":7}\n-1||{"n":3}\n' > "$E2E_TMP/events.expected"
diff "$E2E_TMP/events.expected" "$E2E_TMP/events.actual" >&2 || fail "topic events differs"
kill -INT "$MOCK_PID"
wait "$MOCK_PID" || fail "third run did not stop cleanly"

# Keys per load: --key-column without a topic keys the CSV load; --key-delimiter status=TAB keys only topic status.
exec 6< <(exec timeout --foreground --kill-after=10 "${SLUICE_TIMEOUT:-300}" "$SLUICE" kafka-mock --load orders="$CSV" \
  --load status="$KV" --key-column 1 --key-delimiter "status=$(printf '\t')" --null-empty 2>"$E2E_TMP/mock7.err")
MOCK_PID=$!
while IFS= read -r line <&6; do
  case $line in
    bootstrap.servers=*) BOOTSTRAP=${line#bootstrap.servers=} ;;
    ready) break ;;
  esac
done
[ "$line" = ready ] || { cat "$E2E_TMP/mock7.err" >&2; fail "per-load key run ended before 'ready'"; }
kcat -b "$BOOTSTRAP" -C -t orders -o beginning -e -q -f '%k\t%s\n' | sort > "$E2E_TMP/orders7.actual" || fail "kcat -C failed"
awk -F, 'NF { print $1 "\t" $0 }' "$CSV" | sort > "$E2E_TMP/orders7.expected"
diff "$E2E_TMP/orders7.expected" "$E2E_TMP/orders7.actual" >&2 || fail "per-load keys: topic orders differs"
kcat -b "$BOOTSTRAP" -C -t status -o beginning -e -q -f '%k|%S|%s\n' > "$E2E_TMP/status7.actual" || fail "kcat -C failed"
diff "$E2E_TMP/status.expected" "$E2E_TMP/status7.actual" >&2 || fail "per-load keys: topic status differs"
kill -INT "$MOCK_PID"
wait "$MOCK_PID" || fail "per-load key run did not stop cleanly"
# Two key options for one topic are an error naming the topic.
run_sluice "$E2E_TMP/out8" "$E2E_TMP/err8" kafka-mock --load status="$KV" --key-column status=1 \
  --key-delimiter "status=$(printf '\t')" --exit-after-load
[ "$RC" -eq 1 ] && grep -q "for topic 'status'" "$E2E_TMP/err8" || { cat "$E2E_TMP/err8" >&2; fail "two key options for one topic"; }

# --exit-after-load ends by itself after 'ready'.
run_sluice "$E2E_TMP/out3" "$E2E_TMP/err3" kafka-mock --topic empty:2 --exit-after-load
expect_success "$E2E_TMP/out3" "$E2E_TMP/err3"
[ "$(tail -n 1 "$E2E_TMP/out3")" = ready ] || fail "--exit-after-load did not print ready last"

# --- bad input names the place ------------------------------------------------------------------------------------
run_sluice "$E2E_TMP/out4" "$E2E_TMP/err4" kafka-mock --load orders="$CSV" --key-column 4 --exit-after-load
[ "$RC" -eq 1 ] || fail "a short CSV line should exit 1, got $RC"
grep -q "orders.csv:1: the line has fewer than 4 fields" "$E2E_TMP/err4" || { cat "$E2E_TMP/err4" >&2; fail "no file:line"; }
run_sluice "$E2E_TMP/out5" "$E2E_TMP/err5" kafka-mock --load t="$E2E_TMP/missing.csv" --exit-after-load
[ "$RC" -eq 1 ] && grep -q "missing.csv" "$E2E_TMP/err5" || fail "a missing file should be named"
# A load larger than the mock keeps (about 5 MB per partition) fails rather than losing messages: 70,000
# lines of 100 bytes = 7 MB into one partition.
awk 'BEGIN { for (i = 0; i < 70000; i++) printf "%099d\n", i }' > "$E2E_TMP/big.txt"
run_sluice "$E2E_TMP/out6" "$E2E_TMP/err6" kafka-mock --load big="$E2E_TMP/big.txt" --exit-after-load
[ "$RC" -eq 1 ] || fail "a load the mock cannot keep should exit 1, got $RC"
grep -q "Topic 'big' keeps only [0-9]* of the 70000 messages loaded" "$E2E_TMP/err6" ||
  { cat "$E2E_TMP/err6" >&2; fail "a truncated load is not reported"; }
echo "kafka-mock ok"

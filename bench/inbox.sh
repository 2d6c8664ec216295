#!/bin/bash
# Benchmark: from a background task's command exiting to a waiting
# `qtask agent inbox --wait` having printed its notification and exited.
# Target: p95 <= 20 ms.
#
# Each run starts `qtask agent inbox --wait 60s` for a fresh scope, then a
# task in that scope whose command ends by writing the time (date +%s%N,
# its last act) to a file; the script takes the time again when the inbox
# process has exited. What lies between: the wrapper sees the exit, the
# capture confirms the output file is complete, the task settles and queues
# its notification (synced to disk), the inbox wakes on the file event,
# consumes it under the lock, prints, exits.
#
# Env: RUNS (default 40).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-40}
TARGET_MS=20

bench_setup
bench_machine
now_ns() { date +%s%N; }

samples=()
for i in $(seq "$RUNS"); do
	export QTASK_SCOPE=bench-inbox-$i
	"$Q" agent inbox --wait 60s >"$tmp/inbox.out" &
	reader=$!
	"$Q" run --bg -- "sleep 0.2; date +%s%N >$tmp/exit.ns" >/dev/null
	code=0
	wait "$reader" || code=$?
	t1=$(now_ns)
	[ "$code" -eq 0 ] && grep -q '</task-notification>' "$tmp/inbox.out" ||
		{ echo "inbox: run $i: inbox exited $code without a notification" >&2; exit 1; }
	samples+=("$(( (t1 - $(cat "$tmp/exit.ns")) / 1000 ))")
	"$tmp/settle"
done

read -r p50 p95 worst best < <(printf '%s\n' "${samples[@]}" | sort -n |
	awk '{ v[NR] = $1 } END { printf "%.2f %.2f %.2f %.2f\n", v[int((NR + 1) / 2)] / 1000, v[int(NR * 0.95 + 0.999)] / 1000, v[NR] / 1000, v[1] / 1000 }')
echo
echo "inbox: command exit → inbox --wait printed and exited, over $RUNS runs: min ${best} ms, median ${p50} ms, p95 ${p95} ms, max ${worst} ms"
echo "inbox: all samples (µs): $(printf '%s\n' "${samples[@]}" | sort -n | tr '\n' ' ')"
echo "inbox: target p95 <= ${TARGET_MS} ms: $(bench_verdict "$p95" "$TARGET_MS")"
bench_result "bench=inbox" "baseline=-" "qtask_ms=$p50" "p95_ms=$p95" "worst_ms=$worst" \
	"target=p95<=${TARGET_MS}ms" "verdict=$(bench_verdict "$p95" "$TARGET_MS")"

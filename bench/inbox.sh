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

bench_latency inbox "command exit → inbox --wait printed and exited" "$TARGET_MS" "${samples[@]}"

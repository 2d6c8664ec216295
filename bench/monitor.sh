#!/bin/bash
# Benchmark: from a monitor's command printing a line to a waiting
# `qtask agent inbox --wait` having printed that line's event notification
# and exited. Target (issue 9): p95 <= 50 ms.
#
# One monitor runs for the whole benchmark; its command prints one line per
# run, when the script creates that run's trigger file, and writes the time
# (date +%s%N) just before it prints. Each run starts `qtask agent inbox
# --wait 60s`, lets it reach its wait, creates the trigger, and takes the
# time again when the inbox process has exited. What lies between: the pane
# → pipe-pane → the wrapper's capture writes the line to the output file;
# the wrapper's event follower wakes on the file event, reads the line,
# counts the event and queues it under the lock; the inbox wakes on the
# queue directory's file event, consumes it, prints, exits. Runs are spaced
# 1.1 s apart so the token bucket (5 at once, then one a second) never
# drops a line.
#
# Env: RUNS (default 40).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-40}
TARGET_MS=50

bench_setup
bench_machine
now_ns() { date +%s%N; }

export QTASK_SCOPE=bench-monitor
"$Q" monitor --max-events 10000 --idle-timeout 10m -- \
	"i=0; while :; do i=\$((i+1)); while [ ! -e $tmp/go.\$i ]; do sleep 0.002; done; date +%s%N >$tmp/printed.\$i; echo line \$i; done" >/dev/null

samples=()
for i in $(seq "$RUNS"); do
	"$Q" agent inbox --wait 60s >"$tmp/inbox.out" &
	reader=$!
	sleep 0.3 # the inbox is waiting: its start is not what is measured
	: >"$tmp/go.$i"
	code=0
	wait "$reader" || code=$?
	t1=$(now_ns)
	[ "$code" -eq 0 ] && grep -q "<result>line $i</result>" "$tmp/inbox.out" ||
		{ echo "monitor: run $i: inbox exited $code without event $i: $(cat "$tmp/inbox.out")" >&2; exit 1; }
	samples+=("$(( (t1 - $(cat "$tmp/printed.$i")) / 1000 ))")
	sleep 0.8
done
"$Q" stop --all >/dev/null

bench_latency monitor "line printed → inbox --wait printed its event and exited" "$TARGET_MS" "${samples[@]}"

#!/bin/bash
# Benchmark: readiness gate latency. How long after a task prints the line
# `run --bg --ready` waits for (or opens the port `--ready-port` waits
# for) does the waiting qtask return? Target: p95 <= 50 ms for both.
#
# Each sample starts a task that blocks reading a FIFO, gives the gate
# 200 ms to be waiting (the FIFO write itself also blocks until the task
# has opened it), then releases the task, which ends 1 s later; the next
# sample waits until it has settled, so no sample pays for another's work.
# The task stamps the time ($EPOCHREALTIME, or Python's time.time() right
# before listen()) just before it prints the line or starts listening; the sample is the time
# the qtask process has exited minus that stamp. Both clocks are the
# same realtime clock.
#
# Env: RUNS (default 40 per gate).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-40}
TARGET_MS=50

bench_need python3
bench_setup
bench_machine
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
# bash in the task, for $EPOCHREALTIME without a fork.
printf 'shell = "bash"\nsession = "qtask"\n' >"$QTASK_CONFIG"

# sample ID COMMAND GATE-FLAGS...: one gated run; prints its latency in µs.
sample() {
	local i=$1 cmd=$2
	shift 2
	mkfifo "$tmp/f$i"
	"$Q" run --bg "$@" -- "read _ < $tmp/f$i; $cmd" >"$tmp/out$i" 2>&1 &
	local q=$!
	sleep 0.2
	echo go >"$tmp/f$i"
	local code=0
	wait "$q" || code=$?
	local done=$EPOCHREALTIME
	if [ "$code" -ne 0 ]; then
		echo "ready: sample $i exited $code:" >&2
		cat "$tmp/out$i" >&2
		exit 1
	fi
	awk -v a="$(cat "$tmp/t$i")" -v b="$done" 'BEGIN { printf "%d\n", (b - a) * 1000000 }'
	"$tmp/settle" >&2
}

line=()
for i in $(seq "$RUNS"); do
	line+=("$(sample "l$i" "printf '%s\n' \"\$EPOCHREALTIME\" > $tmp/tl$i; echo READY; sleep 1" --ready '^READY$')")
done
bench_latency ready-line "line printed → run --bg --ready returned" "$TARGET_MS" "${line[@]}"

port=()
base=$((20000 + RANDOM % 20000))
for i in $(seq "$RUNS"); do
	p=$((base + i))
	listen="import socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $p))
open('$tmp/tp$i', 'w').write(repr(time.time()))
s.listen()
time.sleep(1)"
	port+=("$(sample "p$i" "exec python3 -c \"$listen\"" --ready-port "$p")")
done
bench_latency ready-port "port listening → run --bg --ready-port returned" "$TARGET_MS" "${port[@]}"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

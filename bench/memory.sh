#!/bin/bash
# Benchmark 6: memory per running task.
#
# Starts background tasks (`qtask run --bg -- sleep 300`) on a private
# server, 10 and then 50 in all, and at each size sums the proportional set
# size (Pss in /proc/PID/smaps_rollup) of what qtask keeps per task: the
# wrapper (`qtask _exec ID`) and the pane's pipe process if it has one (the
# tmux server's child that is not a pane: none since the wrapper takes the
# pane's pipe itself, a `cat` writing into the wrapper's pipe with
# QTASK_CAPTURE=cat, `qtask _capture ID` before the capture moved into the
# wrapper). PSS
# charges shared pages (the qtask binary, libc) to each process in
# proportion, so the mean per task falls as tasks share them; the marginal
# cost (50 tasks minus 10, over 40) is the memory one more task adds. The
# script also counts qtask processes per running task.
#
# The command's own processes (`sleep`) are not counted: they are the task.
# Target: mean <= 2 MB per task at 10 tasks (decimal MB, like capture's RSS).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TARGET_MB=2

bench_setup
bench_machine
srv=$(tmux -S "$sock" display-message -p '#{pid}')

pss() { awk '/^Pss:/ { print $2 }' "/proc/$1/smaps_rollup"; }

ids=()
# start N: start tasks until there are N.
start() {
	local out
	while [ "${#ids[@]}" -lt "$1" ]; do
		out=$("$Q" run --bg --json -- sleep 300)
		[[ $out =~ \"id\":\ \"([0-9a-f]+)\" ]] || { echo "memory: no id in: $out" >&2; exit 1; }
		ids+=("${BASH_REMATCH[1]}")
	done
}

# The pipe process of task ID, if any: a child of the server that is not a
# pane, whose stdout is a pipe the task's wrapper holds (a cat) or whose
# argv names the task.
pipe_of() {
	local id=$1 p w held
	w=$(jq -r '.wrapper_pid // 0' "$QTASK_STATE_DIR/tasks/$id.json")
	held=$(find "/proc/$w/fd" -mindepth 1 -printf '%l\n' 2>/dev/null | grep '^pipe:' || true)
	for p in $(pgrep -P "$srv"); do
		if grep -qx "$p" <<<"$panes"; then continue; fi
		if { [ -n "$held" ] && grep -qxF -- "$(readlink "/proc/$p/fd/1" 2>/dev/null)" <<<"$held"; } ||
			tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- " $id"; then
			echo "$p"
			return
		fi
	done
}

# handshakes lists the server's children that are not panes and are still
# `sh`: pipe-pane handshakes under way.
handshakes() {
	local p
	for p in $(pgrep -P "$srv"); do
		if grep -qx "$p" <<<"$panes"; then continue; fi
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sh ]; then echo "$p"; fi
	done
}

pss_of() { if [ -n "$1" ]; then pss "$1"; else echo 0; fi; }

# measure: wait until every task has its wrapper and its command and no
# pipe handshake is under way, give the wrappers a second to finish
# starting up, then set wrapper_kb and pipe_kb to the PSS sums over all
# tasks.
measure() {
	local id w p ready=0
	for _ in $(seq 500); do
		panes=$(tmux -S "$sock" list-panes -a -F '#{pane_pid}')
		ready=0
		for id in "${ids[@]}"; do
			w=$(jq -r '.wrapper_pid // 0' "$QTASK_STATE_DIR/tasks/$id.json")
			p=$(jq -r '.pid // 0' "$QTASK_STATE_DIR/tasks/$id.json")
			if [ "$w" -gt 0 ] && [ "$p" -gt 0 ]; then ready=$((ready + 1)); fi
		done
		[ "$ready" -eq "${#ids[@]}" ] && [ -z "$(handshakes)" ] && break
		sleep 0.02
	done
	[ "$ready" -eq "${#ids[@]}" ] || { echo "memory: only $ready of ${#ids[@]} tasks got a wrapper and a command" >&2; exit 1; }
	sleep 1
	panes=$(tmux -S "$sock" list-panes -a -F '#{pane_pid}')
	wrapper_kb=0 pipe_kb=0
	for id in "${ids[@]}"; do
		wrapper_kb=$((wrapper_kb + $(pss "$(jq -r '.wrapper_pid' "$QTASK_STATE_DIR/tasks/$id.json")")))
		pipe_kb=$((pipe_kb + $(pss_of "$(pipe_of "$id")")))
	done
}

mb() { awk -v k="$1" 'BEGIN { printf "%.2f", k * 1024 / 1e6 }'; }
report() {
	local n=${#ids[@]}
	echo "memory: $n running tasks; mean PSS per task: wrapper $(mb $((wrapper_kb / n))) MB +" \
		"pipe $(mb $((pipe_kb / n))) MB = $(mb $(((wrapper_kb + pipe_kb) / n))) MB"
}

start 10
measure
report
mean10=$(((wrapper_kb + pipe_kb) / 10)) total10=$((wrapper_kb + pipe_kb))
echo "memory: qtask processes per running task: $(awk -v n="$(pgrep -f -- "--state-dir $QTASK_STATE_DIR" | wc -l)" \
	'BEGIN { printf "%.1f", n / 10 }')"
start 50
measure
report
echo "memory: marginal PSS of one more task (50 tasks minus 10, over 40): $(mb $(((wrapper_kb + pipe_kb - total10) / 40))) MB"
"$Q" stop --all >/dev/null
"$tmp/settle" || true

verdict=$(awk -v m="$(mb "$mean10")" -v t="$TARGET_MB" 'BEGIN { print (m <= t ? "PASS" : "MISS") }')
echo "memory: mean PSS per task at 10 tasks $(mb "$mean10") MB, target <= ${TARGET_MB} MB: $verdict"
bench_result "bench=memory" "baseline=-" "baseline_ms=-" "qtask_ms=-" "ratio=$(mb "$mean10")MB" \
	"target=<=${TARGET_MB}MB" "verdict=$verdict"

#!/bin/bash
# CPU time of a whole start, everything included, against a raw
# `tmux new-window -d -- true`: the starting processes (qtask or the tmux
# client, and their children) plus what the tmux server spends on it and
# reaps (the pane's processes: for qtask its wrapper, the pane pipe and the
# command; for the baseline `true`). Wall-time ratios swing with the load of
# a shared machine; CPU time much less, and a burst of starts converges to
# this ratio once the CPUs are busy (bench/burst.sh).
#
# Env: N (starts per sample, default 50), RUNS (samples each, default 3).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

N=${N:-50}
RUNS=${RUNS:-3}

bench_setup
bench_need perf
bench_machine

server=$(tmux -S "$sock" display-message -p '#{pid}')
tick=$(getconf CLK_TCK)
# The server's own CPU and its reaped children's, in ticks (the fields
# after the parenthesised name, which holds a space: "(tmux: server)").
server_ticks() { sed 's/.*) //' "/proc/$server/stat" | awk '{ print $12 + $13 + $14 + $15 }'; }

# sample NAME CMD: N starts of CMD; prints ms of CPU per start.
sample() {
	local cmd=$2 s0 s1 callers
	"$tmp/settle"
	s0=$(server_ticks)
	callers=$(perf stat -x, -e task-clock -- bash -c "for ((i = 0; i < $N; i++)); do $cmd >/dev/null; done" 2>&1 >/dev/null |
		awk -F, '/task-clock/ { print $1 }')
	"$tmp/settle"
	s1=$(server_ticks)
	awk -v n="$N" -v c="$callers" -v s=$((s1 - s0)) -v t="$tick" -v name="$1" \
		'BEGIN { printf "%s %.2f %.2f\n", name, c / n, s * 1000 / t / n }'
}

for ((r = 0; r < RUNS; r++)); do
	sample tmux "tmux -S $sock new-window -d -t =qtask: -- true"
	sample qtask "$Q run --bg -- true"
done | awk '
	{ caller[$1] += $2; server[$1] += $3; n[$1]++
	  printf "start-cpu: %-5s per start: caller %.2f ms + server and pane %.2f ms = %.2f ms\n", $1, $2, $3, $2 + $3 }
	END {
	  b = (caller["tmux"] + server["tmux"]) / n["tmux"]; q = (caller["qtask"] + server["qtask"]) / n["qtask"]
	  printf "start-cpu: means: tmux %.2f ms, qtask %.2f ms, ratio %.2fx\n", b, q, q / b
	  printf "RESULT bench=start-cpu baseline=tmux-new-window baseline_ms=%.2f qtask_ms=%.2f ratio=%.2f\n", b, q, q / b
	}'

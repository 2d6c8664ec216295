#!/bin/bash
# Benchmark 1: wall time of `qtask run --bg -- true` against a raw
# `tmux new-window -d -- true` on the same, already running tmux server.
# Reported as the ratio of hyperfine means. Target: <= 1.5x.
#
# Both commands run with the same --prepare, which waits until the previous
# run's window and any qtask wrapper/capture processes are gone: each
# sample is the start latency on a quiet server, not a backlog of the
# previous runs' background work.
#
# Env: RUNS (default 40, at least 30), WARMUP (default 5).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-40}
WARMUP=${WARMUP:-5}
TARGET=1.5

bench_setup
bench_machine

json=$tmp/run-bg.json
hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" \
	--prepare "$tmp/settle" --export-json "$json" \
	-n tmux "tmux -S $sock new-window -d -t =qtask: -- true" \
	-n qtask "$Q run --bg -- true"
"$tmp/settle"

# Every qtask run must have produced a task that completed.
n=$("$Q" ls --json | jq '[.[] | select(.status == "completed")] | length')
want=$((RUNS + WARMUP))
[ "$n" -eq "$want" ] || { echo "run-bg: $n of $want tasks completed" >&2; exit 1; }

base=$(bench_mean "$json" tmux)
q=$(bench_mean "$json" qtask)
ratio=$(bench_ratio "$q" "$base")
echo
echo "run-bg: tmux new-window $(bench_ms "$base") ms, qtask run --bg $(bench_ms "$q") ms (means of $RUNS runs)"
echo "run-bg: ratio ${ratio}x, target <= ${TARGET}x: $(bench_verdict "$ratio" "$TARGET")"
bench_result "bench=run-bg" "baseline=tmux-new-window" "baseline_ms=$(bench_ms "$base")" \
	"qtask_ms=$(bench_ms "$q")" "ratio=$ratio" "target=<=${TARGET}x" "verdict=$(bench_verdict "$ratio" "$TARGET")"

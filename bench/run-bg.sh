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
# The runs are split into ROUNDS hyperfine calls, the two commands' order
# swapped each round (bench_interleaved), so that a machine whose speed
# drifts does not favour whichever side ran first.
#
# Env: RUNS (default 40, at least 30), ROUNDS (default 4), WARMUP (default
# 5, per round).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-40}
ROUNDS=${ROUNDS:-4}
WARMUP=${WARMUP:-5}
TARGET=1.5
per=$(((RUNS + ROUNDS - 1) / ROUNDS))

bench_setup
bench_machine
# Every task is kept, so that all can be checked.
echo 'keep_finished = 0' >>"$QTASK_CONFIG"

json=$tmp/run-bg.json
bench_interleaved "$json" "$ROUNDS" "$per" \
	tmux "tmux -S $sock new-window -d -t =qtask: -- true" \
	qtask "$Q run --bg -- true" \
	-N --style basic --warmup "$WARMUP" --prepare "$tmp/settle"
"$tmp/settle"

# Every qtask run must have produced a task that completed.
n=$("$Q" ls --json | jq '[.[] | select(.status == "completed")] | length')
want=$(((per + WARMUP) * ROUNDS))
[ "$n" -eq "$want" ] || { echo "run-bg: $n of $want tasks completed" >&2; exit 1; }

base=$(bench_mean "$json" tmux)
q=$(bench_mean "$json" qtask)
ratio=$(bench_ratio "$q" "$base")
mratio=$(bench_ratio "$(bench_median "$json" qtask)" "$(bench_median "$json" tmux)")
echo
echo "run-bg: tmux new-window $(bench_ms "$base") ms, qtask run --bg $(bench_ms "$q") ms (means of $((per * ROUNDS)) runs in $ROUNDS rounds)"
echo "run-bg: ratio ${ratio}x (of medians ${mratio}x), target <= ${TARGET}x: $(bench_verdict "$ratio" "$TARGET")"
bench_result "bench=run-bg" "baseline=tmux-new-window" "baseline_ms=$(bench_ms "$base")" \
	"qtask_ms=$(bench_ms "$q")" "ratio=$ratio" "target=<=${TARGET}x" "verdict=$(bench_verdict "$ratio" "$TARGET")"

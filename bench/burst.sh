#!/bin/bash
# Benchmark 7: a burst of starts. 50 back-to-back `qtask run --bg -- true`
# against 50 back-to-back raw `tmux new-window -d -- true` on the same,
# already running server; one hyperfine sample is the whole burst. Unlike
# run-bg, each start competes with the background work of the ones before
# it (the previous tasks' wrappers and pipes), which is what the number of
# processes per task costs. Reported as the ratio of hyperfine means.
# Target: <= 2x.
#
# Both sides share run-bg's --prepare: every sample starts on a quiet
# server. The script checks that every qtask start produced a completed task.
#
# As in run-bg, the runs are split into ROUNDS hyperfine calls with the
# order swapped each round (bench_interleaved).
#
# Env: RUNS (default 10), ROUNDS (default 2), WARMUP (default 1, per
# round), BURST (default 50).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-10}
ROUNDS=${ROUNDS:-2}
WARMUP=${WARMUP:-1}
BURST=${BURST:-50}
TARGET=2
per=$(((RUNS + ROUNDS - 1) / ROUNDS))

bench_setup
bench_machine
# Keep every task, so that all can be checked.
echo 'keep_finished = 0' >>"$QTASK_CONFIG"

json=$tmp/burst.json
bench_interleaved "$json" "$ROUNDS" "$per" \
	tmux "for ((i = 0; i < $BURST; i++)); do tmux -S $sock new-window -d -t =qtask: -- true; done" \
	qtask "for ((i = 0; i < $BURST; i++)); do $Q run --bg -- true >/dev/null; done" \
	--style basic --shell=bash --warmup "$WARMUP" --prepare "$tmp/settle"
"$tmp/settle"

n=$("$Q" ls --json | jq '[.[] | select(.status == "completed")] | length')
want=$(((per + WARMUP) * ROUNDS * BURST))
[ "$n" -eq "$want" ] || { echo "burst: $n of $want tasks completed" >&2; exit 1; }

base=$(bench_mean "$json" tmux)
q=$(bench_mean "$json" qtask)
ratio=$(bench_ratio "$q" "$base")
mratio=$(bench_ratio "$(bench_median "$json" qtask)" "$(bench_median "$json" tmux)")
echo
echo "burst: $BURST tmux new-window $(bench_ms "$base") ms, $BURST qtask run --bg $(bench_ms "$q") ms (means of $((per * ROUNDS)) runs in $ROUNDS rounds)"
echo "burst: ratio ${ratio}x (of medians ${mratio}x), target <= ${TARGET}x: $(bench_verdict "$ratio" "$TARGET")"
bench_result "bench=burst" "baseline=tmux-new-window-x$BURST" "baseline_ms=$(bench_ms "$base")" \
	"qtask_ms=$(bench_ms "$q")" "ratio=$ratio" "target=<=${TARGET}x" "verdict=$(bench_verdict "$ratio" "$TARGET")"

#!/bin/bash
# Benchmark 2: `qtask ls` (and `qtask ls --json`) with 1,000 finished and 50
# running tasks, and `qtask status ID` among them, against `qtask version`,
# the floor of starting the qtask process at all. Reported as ratios of
# hyperfine means. Targets: ls <= 5x version, status <= 1.5x.
#
# The tasks are real: `qtask run --bg -- true`, waited on with `qtask wait`,
# in batches of 100 so at most 100 windows exist at a time; then RUNNING
# tasks that sleep until the benchmark ends.
#
# Env: TASKS (default 1000), RUNNING (default 50), RUNS (default 30),
# WARMUP (default 3).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TASKS=${TASKS:-1000}
RUNNING=${RUNNING:-50}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
TARGET=5
STATUS_TARGET=1.5

bench_setup
bench_machine
# Keep every task: the default keep_finished (200) would prune most of them.
echo 'keep_finished = 0' >>"$QTASK_CONFIG"

echo "ls: creating $TASKS tasks..."
t0=$EPOCHREALTIME
bench_finished_tasks ls "$TASKS"
"$tmp/settle"
echo "ls: created and waited in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"

for _ in $(seq "$RUNNING"); do
	"$Q" run --bg -- sleep 100000 >/dev/null
done
# The running ones have their command started (a pid), so ls sees them
# as a user would, not as starting.
for _ in $(seq 500); do
	started=$("$Q" ls --json --status running | jq '[.[] | select(.pid != 0)] | length')
	[ "$started" -eq "$RUNNING" ] && break
	sleep 0.01
done

# All of them are there, and ls prints one line for each.
n=$("$Q" ls --json | jq '[.[] | select(.status == "completed")] | length')
[ "$n" -eq "$TASKS" ] || { echo "ls: $n of $TASKS tasks completed" >&2; exit 1; }
n=$("$Q" ls --json | jq '[.[] | select(.status == "running" and .pid != 0)] | length')
[ "$n" -eq "$RUNNING" ] || { echo "ls: $n of $RUNNING tasks running" >&2; exit 1; }
lines=$("$Q" ls | wc -l)
[ "$lines" -eq $((TASKS + RUNNING + 1)) ] || { echo "ls: printed $lines lines, want $((TASKS + RUNNING + 1))" >&2; exit 1; }
# status of one finished task (the oldest) and one running one (the newest).
done_id=$("$Q" ls --json | jq -r 'first | .id')
run_id=$("$Q" ls --json | jq -r 'last | .id')

json=$tmp/ls.json
hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
	-n version "$Q version" \
	-n ls "$Q ls" \
	-n ls-json "$Q ls --json" \
	-n status "$Q status $done_id" \
	-n status-running "$Q status $run_id"

v=$(bench_mean "$json" version)
echo
echo "ls: version $(bench_ms "$v") ms ($TASKS finished and $RUNNING running tasks, means of $RUNS runs)"
for name in ls ls-json status status-running; do
	target=$TARGET
	[[ $name == status* ]] && target=$STATUS_TARGET
	m=$(bench_mean "$json" "$name")
	r=$(bench_ratio "$m" "$v")
	echo "ls: $name $(bench_ms "$m") ms, ${r}x version, target <= ${target}x: $(bench_verdict "$r" "$target")"
	bench_result "bench=$name" "baseline=qtask-version" "baseline_ms=$(bench_ms "$v")" \
		"qtask_ms=$(bench_ms "$m")" "ratio=$r" "target=<=${target}x" "verdict=$(bench_verdict "$r" "$target")"
done

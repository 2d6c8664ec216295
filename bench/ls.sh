#!/bin/bash
# Benchmark 2: `qtask ls` (and `qtask ls --json`) with 1,000 finished tasks,
# against `qtask version`, the floor of starting the qtask process at all.
# Reported as the ratio of hyperfine means. Target: ls <= 10x version.
#
# The 1,000 tasks are real: `qtask run --bg -- true`, waited on with
# `qtask wait`, in batches of 100 so at most 100 windows exist at a time.
#
# Env: TASKS (default 1000), RUNS (default 30), WARMUP (default 3).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TASKS=${TASKS:-1000}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
BATCH=100
TARGET=10

bench_setup
bench_machine
# Keep every task: the default keep_finished (200) would prune most of them.
echo 'keep_finished = 0' >>"$QTASK_CONFIG"

echo "ls: creating $TASKS tasks..."
t0=$EPOCHREALTIME
made=0
while [ "$made" -lt "$TASKS" ]; do
	ids=()
	for _ in $(seq "$(( TASKS - made < BATCH ? TASKS - made : BATCH ))"); do
		out=$("$Q" run --bg --json -- true)
		[[ $out =~ \"id\":\ \"([0-9a-f]+)\" ]] || { echo "ls: no id in: $out" >&2; exit 1; }
		ids+=("${BASH_REMATCH[1]}")
	done
	"$Q" wait "${ids[@]}" >/dev/null
	made=$((made + ${#ids[@]}))
done
"$tmp/settle"
echo "ls: created and waited in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"

# All of them are there and finished, and ls prints one line for each.
n=$("$Q" ls --json | jq '[.[] | select(.status == "completed")] | length')
[ "$n" -eq "$TASKS" ] || { echo "ls: $n of $TASKS tasks completed" >&2; exit 1; }
lines=$("$Q" ls | wc -l)
[ "$lines" -eq $((TASKS + 1)) ] || { echo "ls: printed $lines lines, want $((TASKS + 1))" >&2; exit 1; }

json=$tmp/ls.json
hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
	-n version "$Q version" \
	-n ls "$Q ls" \
	-n ls-json "$Q ls --json"

v=$(bench_mean "$json" version)
l=$(bench_mean "$json" ls)
lj=$(bench_mean "$json" ls-json)
r=$(bench_ratio "$l" "$v")
rj=$(bench_ratio "$lj" "$v")
echo
echo "ls: version $(bench_ms "$v") ms, ls $(bench_ms "$l") ms, ls --json $(bench_ms "$lj") ms ($TASKS tasks, means of $RUNS runs)"
echo "ls: ls ${r}x version, target <= ${TARGET}x: $(bench_verdict "$r" "$TARGET")"
echo "ls: ls --json ${rj}x version, target <= ${TARGET}x: $(bench_verdict "$rj" "$TARGET")"
bench_result "bench=ls" "baseline=qtask-version" "baseline_ms=$(bench_ms "$v")" \
	"qtask_ms=$(bench_ms "$l")" "ratio=$r" "target=<=${TARGET}x" "verdict=$(bench_verdict "$r" "$TARGET")"
bench_result "bench=ls-json" "baseline=qtask-version" "baseline_ms=$(bench_ms "$v")" \
	"qtask_ms=$(bench_ms "$lj")" "ratio=$rj" "target=<=${TARGET}x" "verdict=$(bench_verdict "$rj" "$TARGET")"

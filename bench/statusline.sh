#!/bin/bash
# Benchmark: the tmux status segment.
#
# 1. `qtask status-line` with 1,000 finished tasks (every tenth failed, so
#    100 unseen failures) and 50 running, against `qtask version`, the floor
#    of starting qtask at all. Target: <= 1.2x.
# 2. What keeping @qtask_status costs a task's start and end: a foreground
#    `qtask run -- true` (start to end, as its caller sees it, so both
#    pushes: the wrapper's once the command runs, and the one that settles
#    it) with the default status_format, against the same with
#    status_format = "" (no push). Target: <= 10 ms more, 5 ms for each.
#    (`qtask run --bg` does not wait for the start's push at all.)
#
# The task menu's opening with the same tasks is bench/menu.sh.
#
# Env: TASKS (default 1000), RUNNING (default 50), RUNS (default 30),
# WARMUP (default 3).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TASKS=${TASKS:-1000}
RUNNING=${RUNNING:-50}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
BATCH=100
TARGET=1.2
TARGET_MS=10

bench_setup
bench_machine
echo 'keep_finished = 0' >>"$QTASK_CONFIG"

# The push, on and off, measured first, while nothing else runs (settle
# waits for every task window and qtask process to be gone).
cp "$QTASK_CONFIG" "$tmp/push.toml"
cp "$QTASK_CONFIG" "$tmp/nopush.toml"
echo 'status_format = ""' >>"$tmp/nopush.toml"
json=$tmp/push.json
hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" --prepare "$tmp/settle" \
	-n no-push "env QTASK_CONFIG=$tmp/nopush.toml $Q run --timeout 0 -- true" \
	-n push "env QTASK_CONFIG=$tmp/push.toml $Q run --timeout 0 -- true"
np=$(bench_mean "$json" no-push)
p=$(bench_mean "$json" push)
added=$(awk -v a="$p" -v b="$np" 'BEGIN { printf "%.2f", (a - b) * 1000 }')
pass=$(awk -v d="$added" -v t="$TARGET_MS" 'BEGIN { print (d <= t ? "PASS" : "MISS") }')
echo
echo "statusline: foreground run -- true: $(bench_ms "$np") ms without the push, $(bench_ms "$p") ms with it: +$added ms, target <= ${TARGET_MS} ms: $pass"

echo "statusline: creating $TASKS finished and $RUNNING running tasks..."
made=0
while [ "$made" -lt "$TASKS" ]; do
	ids=()
	for _ in $(seq "$(( TASKS - made < BATCH ? TASKS - made : BATCH ))"); do
		cmd=true
		[ $(( (made + ${#ids[@]}) % 10 )) -eq 0 ] && cmd=false
		out=$("$Q" run --bg --json -- "$cmd")
		[[ $out =~ \"id\":\ \"([0-9a-f]+)\" ]] || { echo "statusline: no id in: $out" >&2; exit 1; }
		ids+=("${BASH_REMATCH[1]}")
	done
	"$Q" wait "${ids[@]}" >/dev/null || true
	made=$((made + ${#ids[@]}))
done
for _ in $(seq "$RUNNING"); do "$Q" run --bg -- sleep 100000 >/dev/null; done

want="⏵$RUNNING ✗$((TASKS / 10))"
got=$("$Q" status-line)
[ "$got" = "$want" ] || { echo "statusline: status-line printed '$got', want '$want'" >&2; exit 1; }
for _ in $(seq 500); do
	[ "$(tmux -S "$sock" show-options -gqv @qtask_status)" = "$want" ] && break
	sleep 0.01
done
pushed=$(tmux -S "$sock" show-options -gqv @qtask_status)
[ "$pushed" = "$want" ] || { echo "statusline: @qtask_status is '$pushed', want '$want'" >&2; exit 1; }

json=$tmp/statusline.json
hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$json" \
	-n version "$Q version" \
	-n status-line "$Q status-line"
v=$(bench_mean "$json" version)
s=$(bench_mean "$json" status-line)
r=$(bench_ratio "$s" "$v")
echo
echo "statusline: version $(bench_ms "$v") ms, status-line $(bench_ms "$s") ms"
echo "statusline: status-line ${r}x version, target <= ${TARGET}x: $(bench_verdict "$r" "$TARGET")"

"$Q" stop --all >/dev/null
bench_result "bench=statusline" "baseline=qtask-version" "baseline_ms=$(bench_ms "$v")" \
	"qtask_ms=$(bench_ms "$s")" "ratio=$r" "target=<=${TARGET}x" "verdict=$(bench_verdict "$r" "$TARGET")"
bench_result "bench=status-push" "baseline=no-push" "baseline_ms=$(bench_ms "$np")" \
	"qtask_ms=$(bench_ms "$p")" "ratio=+${added}ms" "target=<=${TARGET_MS}ms" "verdict=$pass"

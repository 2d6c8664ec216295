#!/bin/bash
# Benchmark: an agent hook with nothing to deliver, against `qtask version`
# (the cost of starting qtask at all), measured in the same run. The hooks
# run on every prompt and tool call of an agent. Target: <= 1.3x.
#
# Two hooks: Claude's UserPromptSubmit (a context event: one directory
# read of the scope's queue) and its Stop (an end of turn: the same, plus
# the block counter). hyperfine runs them without a shell (-N: at ~2 ms a
# shell's start-up is more than hyperfine can subtract reliably), so they
# name the event with --event on an empty stdin; a sanity check below runs
# them once on the agent's JSON. Medians: the machine is shared.
#
# Env: RUNS (default 500).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-500}
TARGET=1.3

bench_setup
bench_machine
export QTASK_SCOPE=bench-agent
echo '{"session_id":"bench","hook_event_name":"UserPromptSubmit","cwd":"/tmp"}' >"$tmp/prompt.json"
echo '{"session_id":"bench","hook_event_name":"Stop","stop_hook_active":false}' >"$tmp/stop.json"
"$Q" agent inbox >/dev/null # the state dir exists: the hooks pay no first-run cost

json=$tmp/agent-hook.json
hyperfine -N --style basic --warmup 20 --runs "$RUNS" --export-json "$json" \
	-n version "$Q version" \
	-n prompt-hook "$Q agent hook claude --event UserPromptSubmit" \
	-n stop-hook "$Q agent hook claude --event Stop" >&2

for out in "$("$Q" agent hook claude <"$tmp/prompt.json")" "$("$Q" agent hook claude <"$tmp/stop.json")"; do
	[ -z "$out" ] || { echo "agent-hook: a hook with nothing pending printed $out" >&2; exit 1; }
done

echo
median() { jq -r --arg n "$2" '.results[] | select(.command == $n) | .median' "$1"; }
base=$(median "$json" version)
for hook in prompt-hook stop-hook; do
	mean=$(median "$json" "$hook")
	ratio=$(bench_ratio "$mean" "$base")
	echo "agent-hook/$hook (medians): qtask version $(bench_ms "$base") ms, hook $(bench_ms "$mean") ms: ${ratio}x (target <= ${TARGET}x): $(bench_verdict "$ratio" "$TARGET")"
	bench_result "bench=$hook" "baseline=qtask-version" "baseline_ms=$(bench_ms "$base")" "qtask_ms=$(bench_ms "$mean")" \
		"ratio=$ratio" "target=<=${TARGET}x" "verdict=$(bench_verdict "$ratio" "$TARGET")"
done

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
# Then the time from SIGTERM to the hook's exit (target: p95 <= 100 ms), in
# the two places a hook waits: blocked reading a stdin that stays open
# (until a thread of it sleeps in pipe_read), and holding an end of turn
# (--hold) for a running task (once it watches the records with inotify).
# The clock starts as the signal is sent and stops when `wait` returns.
#
# Env: RUNS (default 500), SIGNAL_RUNS (default 40 per case).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-500}
TARGET=1.3
SIGNAL_RUNS=${SIGNAL_RUNS:-40}
SIGNAL_TARGET_MS=100

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

# await PID TEST: poll (5 ms) until TEST PID succeeds; fail after 10 s.
await() {
	local _
	for _ in $(seq 2000); do
		"$2" "$1" && return 0
		sleep 0.005
	done
	echo "agent-hook: hook $1 never got to where it waits ($2)" >&2
	exit 1
}
reading_stdin() { grep -qs pipe_read /proc/"$1"/task/*/wchan; }
holding() { ls -l /proc/"$1"/fd 2>/dev/null | grep -q inotify; }
# term PID: sends SIGTERM, waits for the exit and sets us to the µs
# between (not in a $(…): a subshell cannot wait for this shell's child);
# the hook must exit 143 (128+SIGTERM).
term() {
	local t0 t1 code=0
	t0=$EPOCHREALTIME
	kill -TERM "$1"
	wait "$1" || code=$?
	t1=$EPOCHREALTIME
	[ "$code" -eq 143 ] || { echo "agent-hook: the hook exited $code after SIGTERM, want 143" >&2; exit 1; }
	us=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1e6 }')
}

# A stdin nobody closes: this script holds the FIFO's write end.
mkfifo "$tmp/stdin.fifo"
exec 3<>"$tmp/stdin.fifo"
open_samples=()
for _ in $(seq "$SIGNAL_RUNS"); do
	"$Q" agent hook claude --event UserPromptSubmit <"$tmp/stdin.fifo" 3>&- &
	await $! reading_stdin
	term $!
	open_samples+=("$us")
done
exec 3>&-
bench_latency hook-sigterm-stdin "SIGTERM → exit of a hook blocked on an open stdin" "$SIGNAL_TARGET_MS" "${open_samples[@]}"

"$Q" run --bg -- sleep 100000 >/dev/null
hold_samples=()
for _ in $(seq "$SIGNAL_RUNS"); do
	"$Q" agent hook claude --event Stop --hold 60s </dev/null &
	await $! holding
	term $!
	hold_samples+=("$us")
done
bench_latency hook-sigterm-hold "SIGTERM → exit of a hook holding the end of a turn (--hold)" "$SIGNAL_TARGET_MS" "${hold_samples[@]}"

#!/bin/bash
# Benchmark: a routed foreground `true` — what Claude Code runs for a Bash
# tool call once `qtask agent install claude` set its shell prefix: the
# qtask-claude-shell link with Claude's script, which starts a foreground
# task and waits for it — against the least a tmux window that reports its
# end can cost: `tmux new-window` running `true` and signalling a channel,
# and `tmux wait-for` on that channel. Target: <= 2x.
#
# Both run under hyperfine's shell (Claude runs the prefix from bash -c);
# means and medians of RUNS runs, each after the previous one's window is
# gone (--prepare settle).
#
# Env: RUNS (default 200).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-200}
TARGET=2

bench_setup
bench_machine
export QTASK_SCOPE=bench-route
ln -s "$Q" "$tmp/qtask-claude-shell"
script="eval 'true' < /dev/null && pwd -P >| $tmp/cwd"
cat >"$tmp/raw.sh" <<-RAW
	ch=raw-\$\$-\$RANDOM
	tmux -S '$sock' new-window -d -t '=qtask:' "true; tmux -S '$sock' wait-for -S \$ch"
	tmux -S '$sock' wait-for "\$ch"
RAW
"$tmp/qtask-claude-shell" "$script" # the state dir exists: no first-run cost
[ "$(cat "$tmp/cwd")" = "$(pwd -P)" ] || { echo "route: the routed script did not run" >&2; exit 1; }

json=$tmp/route.json
hyperfine --style basic --warmup 10 --runs "$RUNS" --prepare "$tmp/settle" --export-json "$json" \
	-n raw-tmux "bash $tmp/raw.sh" \
	-n routed-true "$tmp/qtask-claude-shell \"$script\"" >&2

[ "$("$Q" ls --json --scope bench-route | jq '[.[] | select(.command == "true" and .exit_code == 0)] | length')" -gt "$RUNS" ] ||
	{ echo "route: the routed runs are not tasks of the model's command" >&2; exit 1; }

echo
stat() { jq -r --arg n "$2" --arg k "$3" '.results[] | select(.command == $n) | .[$k]' "$1"; }
for k in mean median; do
	base=$(stat "$json" raw-tmux "$k")
	routed=$(stat "$json" routed-true "$k")
	ratio=$(bench_ratio "$routed" "$base")
	echo "route ($k): raw tmux new-window + wait-for $(bench_ms "$base") ms, routed true $(bench_ms "$routed") ms: ${ratio}x (target <= ${TARGET}x): $(bench_verdict "$ratio" "$TARGET")"
done
bench_result "bench=route" "baseline=tmux-new-window" "baseline_ms=$(bench_ms "$base")" "qtask_ms=$(bench_ms "$routed")" \
	"ratio=$ratio" "target=<=${TARGET}x" "verdict=$(bench_verdict "$ratio" "$TARGET")"

#!/bin/bash
# Benchmark: cost of qtask's shell hooks per prompt, against the same shell
# without them, measured in the same run. Target: <= 5 ms per prompt.
#
# bash and zsh run interactively (-i) reading N commands from a pipe: each
# command fires the preexec and precmd hooks exactly as at a real prompt.
# fish only fires its events in its interactive reader, so for fish the
# events are emitted in a loop, with the hooks loaded vs. without.
# Per-prompt cost = (time with hooks - time without) / N.
#
# Env: N (commands per run, default 2000), RUNS (default 10).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

N=${N:-2000}
RUNS=${RUNS:-10}
TARGET_MS=5

bench_setup
bench_need bash zsh fish
bench_machine
export TMUX_PANE=%9000
"$Q" init bash >"$tmp/hooks.bash"
"$Q" init zsh >"$tmp/hooks.zsh"
"$Q" init fish >"$tmp/hooks.fish"

commands() { for _ in $(seq "$N"); do echo ':'; done; }
commands >"$tmp/plain.in"
# Loaded the way the README says, with eval (typed into an interactive zsh
# line by line, the snippet's comments would not be comments).
{ echo "eval \"\$(cat $tmp/hooks.bash)\""; commands; } >"$tmp/bash-hooked.in"
{ echo "eval \"\$(cat $tmp/hooks.zsh)\""; commands; } >"$tmp/zsh-hooked.in"
cat >"$tmp/fish-loop.fish" <<FISH
for i in (seq $N)
    emit fish_preexec ':'
    emit fish_postexec ':'
end
FISH

json=$tmp/hooks.json
# Shell mode (not -N): the commands are fed on stdin, which is what makes
# bash and zsh prompt for each one; hyperfine subtracts its shell's start.
hyperfine --style basic --warmup 2 --runs "$RUNS" --export-json "$json" \
	-n bash-plain "bash --norc --noprofile -i <$tmp/plain.in >/dev/null 2>&1" \
	-n bash-hooked "bash --norc --noprofile -i <$tmp/bash-hooked.in >/dev/null 2>&1" \
	-n zsh-plain "zsh -f -i <$tmp/plain.in >/dev/null 2>&1" \
	-n zsh-hooked "zsh -f -i <$tmp/zsh-hooked.in >/dev/null 2>&1" \
	-n fish-plain "fish --no-config -i -c 'source $tmp/fish-loop.fish'" \
	-n fish-hooked "fish --no-config -i -c 'source $tmp/hooks.fish; source $tmp/fish-loop.fish'" >&2

# Sanity: the hooks really ran (they create the pane's file; the last
# prompt leaves it empty).
[ -e "$QTASK_STATE_DIR/panes/9000" ] || { echo "hooks: the hooks never wrote their pane file" >&2; exit 1; }

echo
for sh in bash zsh fish; do
	plain=$(bench_mean "$json" "$sh-plain")
	hooked=$(bench_mean "$json" "$sh-hooked")
	per=$(awk -v h="$hooked" -v p="$plain" -v n="$N" 'BEGIN { printf "%.4f", (h - p) / n * 1000 }')
	ratio=$(bench_ratio "$per" "$TARGET_MS")
	echo "hooks/$sh: $N prompts without hooks $(bench_ms "$plain") ms, with $(bench_ms "$hooked") ms: ${per} ms per prompt (target <= ${TARGET_MS} ms): $(bench_verdict "$per" "$TARGET_MS")"
	bench_result "bench=hooks-$sh" "baseline=$sh-without-hooks" "baseline_ms=$(bench_ms "$plain")" \
		"qtask_ms=$(bench_ms "$hooked")" "per_prompt_ms=$per" "ratio_to_target=$ratio" "target=<=${TARGET_MS}ms" \
		"verdict=$(bench_verdict "$per" "$TARGET_MS")"
done

# shellcheck shell=bash
# Shared set-up for the qtask benchmarks. Sourced by the bench/*.sh scripts,
# not run on its own.
#
# bench_setup gives every benchmark its own world: a temp dir under /tmp, or
# under BENCH_TMPDIR (short, so the socket path stays far below the ~108-byte
# limit; the state dir lives there too, so BENCH_TMPDIR picks the file
# system the tasks' files are created on), a private
# tmux server on a socket in it, its own QTASK_STATE_DIR and QTASK_CONFIG,
# and a qtask binary built from this checkout. The EXIT trap kills that tmux
# server by its socket and removes the temp dir. The default tmux server and
# ~/.local/state are never touched.

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The source tree qtask is built from: this checkout, unless BENCH_SRC names
# another (e.g. a `git archive` export of one commit).
BENCH_SRC=${BENCH_SRC:-$BENCH_ROOT}

bench_need() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
	done
}

bench_setup() {
	bench_need go tmux hyperfine jq pgrep awk
	tmp=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/qtb.XXXXXX")
	sock=$tmp/sock
	Q=$tmp/qtask
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	# Outside any tmux client, whatever shell this runs in.
	unset TMUX TMUX_PANE QTASK_SCOPE
	export QTASK_STATE_DIR=$tmp/state QTASK_CONFIG=$tmp/config.toml QTASK_TMUX_SOCKET=$sock
	# sh on both sides: the baselines run their commands with sh -c too.
	printf 'shell = "sh"\nsession = "qtask"\n' >"$QTASK_CONFIG"
	# Built as the README says: static, which starts sooner.
	# Every command of the tree, so qtask-exec, the wrapper alone, sits beside
	# qtask where run looks for it.
	(cd "$BENCH_SRC" && CGO_ENABLED=0 go build -o "$tmp/" ./cmd/...)
	# -f /dev/null: no user tmux.conf. The long-lived first window keeps the
	# session (and server) alive while task windows come and go.
	# New windows take the session's size: BENCH_PANE (WxH, default 80x24).
	local pane=${BENCH_PANE:-80x24}
	tmux -f /dev/null -S "$sock" new-session -d -s qtask -x "${pane%x*}" -y "${pane#*x}" -- sleep 100000
	# Settle: block until every window but the first is gone and no qtask
	# process of this state dir is left, so a run never pays for the
	# background work of the one before. Used as hyperfine --prepare.
	cat >"$tmp/settle" <<-SETTLE
		#!/bin/bash
		set -euo pipefail
		for _ in \$(seq 500); do
		    n=\$(tmux -S '$sock' list-windows -t '=qtask:' | wc -l)
		    if [ "\$n" -le 1 ] && ! pgrep -f -- '--state-dir $QTASK_STATE_DIR' >/dev/null; then
		        exit 0
		    fi
		    sleep 0.01
		done
		echo "settle: tasks still running after 5s" >&2
		exit 1
	SETTLE
	chmod +x "$tmp/settle"
}

bench_cleanup() {
	if [ -n "${sock:-}" ]; then
		tmux -S "$sock" kill-server 2>/dev/null || true
		# Tasks still running (ls.sh's) settle as their panes close: let
		# their wrappers finish writing before the state dir goes.
		for _ in $(seq 200); do
			pgrep -f -- "--state-dir $QTASK_STATE_DIR" >/dev/null || break
			sleep 0.025
		done
	fi
	if [ -n "${tmp:-}" ] && [ -z "${BENCH_KEEP:-}" ]; then
		rm -rf "$tmp"
	fi
}

# bench_mean FILE NAME: mean seconds of the hyperfine result named NAME.
bench_mean() {
	jq -r --arg n "$2" '.results[] | select(.command == $n) | .mean' "$1"
}

# bench_interleaved JSON ROUNDS RUNS NAME_A CMD_A NAME_B CMD_B [HYPERFINE_ARGS...]:
# hyperfine on two commands in ROUNDS rounds of RUNS runs each, the order
# of the two swapped every round, merged into JSON as one result per name
# (all its samples, their mean and median). On a shared machine whose speed
# drifts over a minute, a baseline measured wholly before its rival would
# tilt the ratio; interleaved, both see the same drift.
bench_interleaved() {
	local json=$1 rounds=$2 runs=$3 na=$4 ca=$5 nb=$6 cb=$7 round
	shift 7
	for round in $(seq "$rounds"); do
		if [ $((round % 2)) -eq 1 ]; then
			hyperfine "$@" --runs "$runs" --export-json "$json.$round" -n "$na" "$ca" -n "$nb" "$cb"
		else
			hyperfine "$@" --runs "$runs" --export-json "$json.$round" -n "$nb" "$cb" -n "$na" "$ca"
		fi
	done
	jq -s '{results: (map(.results) | add | group_by(.command) | map({command: .[0].command, times: (map(.times) | add)}
		| .mean = (.times | add / length) | .median = (.times | sort | .[length / 2 | floor])))}' \
		$(for round in $(seq "$rounds"); do echo "$json.$round"; done) >"$json"
}

# bench_median FILE NAME: median seconds of a bench_interleaved result.
bench_median() {
	jq -r --arg n "$2" '.results[] | select(.command == $n) | .median' "$1"
}

# bench_ms SECONDS: milliseconds with two decimals.
bench_ms() { awk -v s="$1" 'BEGIN { printf "%.2f", s * 1000 }'; }

# bench_ratio A B: A/B with two decimals.
bench_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# bench_verdict RATIO TARGET: PASS if RATIO <= TARGET, else MISS.
bench_verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r <= t ? "PASS" : "MISS") }'; }

# bench_result KEY=VALUE...: one machine-readable line, gathered by all.sh.
bench_result() { echo "RESULT $*"; }

# bench_latency NAME WHAT TARGET_MS SAMPLE_US...: the summary of a latency
# benchmark: min, median, p95 and max of the samples (microseconds), all of
# them sorted, the verdict of p95 against TARGET_MS, and the RESULT line.
bench_latency() {
	local name=$1 what=$2 target=$3 p50 p95 worst best
	shift 3
	read -r p50 p95 worst best < <(printf '%s\n' "$@" | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.2f %.2f %.2f %.2f\n", v[int((NR + 1) / 2)] / 1000, v[int(NR * 0.95 + 0.999)] / 1000, v[NR] / 1000, v[1] / 1000 }')
	echo
	echo "$name: $what, over $# runs: min ${best} ms, median ${p50} ms, p95 ${p95} ms, max ${worst} ms"
	echo "$name: all samples (µs): $(printf '%s\n' "$@" | sort -n | tr '\n' ' ')"
	echo "$name: target p95 <= ${target} ms: $(bench_verdict "$p95" "$target")"
	bench_result "bench=$name" "baseline=-" "qtask_ms=$p50" "p95_ms=$p95" "worst_ms=$worst" \
		"target=p95<=${target}ms" "verdict=$(bench_verdict "$p95" "$target")"
}

# bench_finished_tasks NAME COUNT: COUNT finished tasks (`true`), started in
# batches of 100 and waited for, so the state dir holds them all. NAME
# prefixes the error if qtask printed no id.
bench_finished_tasks() {
	local name=$1 count=$2 made=0 out ids
	while [ "$made" -lt "$count" ]; do
		ids=()
		for _ in $(seq "$(( count - made < 100 ? count - made : 100 ))"); do
			out=$("$Q" run --bg --json -- true)
			[[ $out =~ \"id\":\ \"([0-9a-f]+)\" ]] || { echo "$name: no id in: $out" >&2; exit 1; }
			ids+=("${BASH_REMATCH[1]}")
		done
		"$Q" wait "${ids[@]}" >/dev/null
		made=$((made + ${#ids[@]}))
	done
}

bench_machine() {
	local rev
	rev=$(git -C "$BENCH_SRC" rev-parse --short HEAD 2>/dev/null || echo "not a git checkout")
	if [ -n "$(git -C "$BENCH_SRC" status --porcelain -- cmd tasks tmux config 2>/dev/null)" ]; then
		rev="$rev+dirty"
	fi
	echo "source: $BENCH_SRC ($rev)"
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(tmux -V), $(go version | cut -d' ' -f3-)"
	# Only where bench_setup made the temp dir (scale.sh runs a test binary
	# in a dir of its own).
	if [ -n "${tmp:-}" ]; then bench_fs_probe; fi
}

# bench_fs_probe prints what creating a file costs in the temp dir now. On
# an ext4 without a journal (this project's benchmark VM) it is 10-30 times
# its usual ~20 µs for minutes after many files were deleted (the inode
# allocator then skips recently deleted inodes; with a journal it never
# checks), and a start
# creates files where the baseline creates none (docs/BENCHMARKS.md,
# run-bg): a high figure says the run's ratios will read high.
bench_fs_probe() {
	local d=$tmp/fs-probe i t0 us
	mkdir "$d"
	t0=$EPOCHREALTIME
	for i in $(seq 100); do : >"$d/f$i"; done
	us=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", (b - a) * 1e6 / 100 }')
	rm -r "$d"
	echo "file creation: ${us} µs each (about 20 µs on a calm file system)"
}

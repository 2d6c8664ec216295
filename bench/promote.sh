#!/bin/bash
# Benchmark: from `qtask promote ID` starting to the waiting foreground
# `qtask run` being released (its process has exited). Target: <= 200 ms.
# Baseline, measured in the same run: `qtask version`, the cost of starting
# a qtask process at all (promote cannot release anyone faster than that).
#
# Env: RUNS (default 20).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-20}
TARGET_MS=200

bench_setup
bench_machine
now_ns() { date +%s%N; }

samples=()
for i in $(seq "$RUNS"); do
	"$Q" run -- "sleep 60" >/dev/null 2>&1 &
	caller=$!
	id=
	for _ in $(seq 500); do
		id=$("$Q" ls --json --status running | jq -r '[.[] | select(.pid > 0 and .background == false)][0].id // empty')
		[ -n "$id" ] && break
		sleep 0.01
	done
	[ -n "$id" ] || { echo "promote: run $i never started" >&2; exit 1; }
	t0=$(now_ns)
	"$Q" promote "$id" >/dev/null
	code=0
	wait "$caller" || code=$?
	t1=$(now_ns)
	[ "$code" -eq 125 ] || { echo "promote: caller exited $code, want 125 (promoted)" >&2; exit 1; }
	samples+=("$(( (t1 - t0) / 1000 ))")
	"$Q" stop --grace 100ms "$id" >/dev/null
done

json=$tmp/version.json
hyperfine -N --style basic --warmup 3 --runs 30 --export-json "$json" -n version "$Q version" >&2
base=$(bench_mean "$json" version)

read -r median worst < <(printf '%s\n' "${samples[@]}" | sort -n |
	awk '{ v[NR] = $1 } END { printf "%.2f %.2f\n", v[int((NR + 1) / 2)] / 1000, v[NR] / 1000 }')
ratio=$(awk -v m="$median" -v b="$base" 'BEGIN { printf "%.2f", m / (b * 1000) }')
echo
echo "promote: promote → caller released, median ${median} ms, worst ${worst} ms over $RUNS runs; qtask version $(bench_ms "$base") ms (${ratio}x)"
echo "promote: target <= ${TARGET_MS} ms (worst case): $(bench_verdict "$worst" "$TARGET_MS")"
bench_result "bench=promote" "baseline=qtask-version" "baseline_ms=$(bench_ms "$base")" "qtask_ms=$median" \
	"worst_ms=$worst" "ratio=$ratio" "target=<=${TARGET_MS}ms" "verdict=$(bench_verdict "$worst" "$TARGET_MS")"

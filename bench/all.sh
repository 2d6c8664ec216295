#!/bin/bash
# Runs the qtask benchmarks one after the other and prints a summary
# table of their RESULT lines. Each benchmark's full output goes to the
# terminal as it runs. Exit status: 0 if every script ran (a missed target
# is reported, not an error), 1 if any failed.
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)

log=$(mktemp /tmp/qtb-all.XXXXXX)
trap 'rm -f "$log"' EXIT

failed=()
start=$EPOCHREALTIME
for b in run-bg start-cpu burst ls scale capture hooks promote agent-hook inbox monitor route mcp memory statusline menu ready; do
	echo "=== $b"
	if ! bash "$dir/$b.sh" 2>&1 | tee -a "$log"; then
		failed+=("$b")
	fi
	echo
done

# RESULT key=value ... lines: one row each.
echo "=== summary ($(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s)"
grep -m1 '^machine:' "$log" || true
printf '%-12s %-20s %12s %12s %8s %8s %s\n' benchmark baseline baseline_ms qtask_ms ratio target verdict
grep '^RESULT ' "$log" | while read -r _ fields; do
	declare -A f=()
	for kv in $fields; do f[${kv%%=*}]=${kv#*=}; done
	printf '%-12s %-20s %12s %12s %8s %8s %s\n' "${f[bench]:-?}" "${f[baseline]:--}" "${f[baseline_ms]:--}" \
		"${f[qtask_ms]:--}" "${f[ratio]:--}" "${f[target]:--}" "${f[verdict]:-?}"
	unset f
done
if [ "${#failed[@]}" -gt 0 ]; then
	echo "failed to run: ${failed[*]}" >&2
	exit 1
fi

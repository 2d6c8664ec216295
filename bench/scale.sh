#!/bin/bash
# Scale check: TASKS (default 200) tasks started at once, then `qtask stop
# --all`: every task cancelled and no process of any of them left (command,
# wrapper, capture). This is the end-to-end test TestStopAllStopsABurst at
# full size, run as the copy isolated() would start: in a private pid
# namespace (unshare, so root), on its own tmux server. It prints how long
# the starts and the stop took.
#
# Env: TASKS (default 200).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TASKS=${TASKS:-200}
bench_need go tmux unshare
bench_machine

dir=$(mktemp -d /tmp/qtb-scale.XXXXXX)
trap 'rm -rf "$dir"' EXIT
out=$dir/out
(cd "$BENCH_SRC" && go test -c -o "$dir/qtask.test" ./cmd/qtask)
# The test binary builds qtask from the package directory, as the README does.
cd "$BENCH_SRC/cmd/qtask"
if QTASK_STOP_ALL_TASKS=$TASKS QTASK_TEST_ISOLATED=1 unshare --pid --fork --mount-proc -- \
	"$dir/qtask.test" -test.run '^TestStopAllStopsABurst$' -test.count=1 -test.v >"$out" 2>&1; then
	verdict=PASS
else
	verdict=FAIL
fi
grep -E 'started in|stop --all of|--- (PASS|FAIL)|panic' "$out" | sed 's/^ *//' || true
[ "$verdict" = PASS ] || tail -40 "$out"
started=$(grep -oE 'started in [0-9.]+m?s' "$out" | head -1 | awk '{print $3}')
stopped=$(grep -oE 'took [0-9.]+m?s' "$out" | head -1 | awk '{print $2}')
echo "scale: $TASKS tasks started at once in ${started:-?}, stop --all in ${stopped:-?}: all cancelled, nothing left: $verdict"
# Go durations ("4.934s", "285ms") as milliseconds.
ms() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) { sub(/ms$/, "", d); print d } else if (d ~ /s$/) { sub(/s$/, "", d); printf "%.0f", d * 1000 } else print "?" }'; }
bench_result "bench=scale-stop-all" "baseline=-" "qtask_ms=$(ms "${stopped:-?}")" "ratio=-" \
	"target=all-cancelled-none-left" "verdict=$verdict"

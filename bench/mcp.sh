#!/bin/bash
# Benchmark: `qtask mcp` over stdio, driven by the official Go SDK's client
# (bench/mcpclient): 1,000 sequential task_status calls on one ended task,
# per-call latency; then on to 10,000 calls, with the server's RSS, threads
# and open fds after the first 1,000 and at the end (growth in threads or
# fds is the leak the target forbids). Targets: median <= 2 ms; RSS <= 30 MB
# after 10,000 calls; threads and fds the same at 1,000 and 10,000.
#
# Env: TIMED (default 1000), TOTAL (default 10000).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TIMED=${TIMED:-1000}
TOTAL=${TOTAL:-10000}

bench_setup
bench_machine
(cd "$BENCH_SRC" && go build -o "$tmp/mcpclient" ./bench/mcpclient)
out=$("$Q" run --bg --json -- 'echo hello')
[[ $out =~ \"id\":\ ?\"([0-9a-f]+)\" ]] || { echo "mcp: no id in: $out" >&2; exit 1; }
id=${BASH_REMATCH[1]}
"$Q" wait "$id" >/dev/null
export QTASK_SCOPE=bench-mcp
"$tmp/mcpclient" -qtask "$Q" -id "$id" -timed "$TIMED" -total "$TOTAL" | tee "$tmp/mcp.out"
median=$(sed -n 's/.*median \([^,]*\),.*/\1/p' "$tmp/mcp.out")
rss_kb=$(sed -n "s/server after $TOTAL calls: RSS \([0-9]*\) kB.*/\1/p" "$tmp/mcp.out")
echo "target: median <= 2ms, RSS <= 30 MB (30720 kB) after $TOTAL calls"
bench_result bench=mcp median="$median" rss_kb="$rss_kb"

#!/bin/bash
# Benchmark 3: 100 MB of output through a task's pane.
#
# qtask side:  qtask run --bg --json -- CMD; qtask wait ID
# baseline:    tmux new-window -d -P -F '#{pane_id}' -- sh -c 'CMD; tmux wait-for -S done-N'
#              tmux pipe-pane -t %N 'cat > FILE; : > FILE.closed'; tmux wait-for done-N
#              (FILE.closed only tells the untimed check when the pipe has drained)
# Each side is timed from before its first command to after its last. The
# sides alternate, RUNS times each (after one untimed warm-up pair); the
# report is the median wall time of each side and their ratio.
# Target: <= 1.25x.
#
# Also reported, as a diagnosis that contention on a busy machine does not
# blur: the CPU time each side costs in all, i.e. the tmux server and
# everything it reaps (pane processes, wrapper, pipe consumer), measured
# once the run has settled, plus the client commands this script ran.
#
# Peak RSS is measured in RSS_RUNS further qtask runs, untimed: the task's
# wrapper (`qtask _exec ID`, which does the capture itself) is polled every
# 50 ms for VmHWM; the largest value seen is reported. The poller is not
# run during the timed runs: a pipeline this busy slows down by a fifth for
# any process that merely wakes 20 times a second (a `sleep 0.05` loop made
# the baseline itself 2.5 s -> 3.0 s), and it ran on the qtask side only.
# Target: < 20 MB. The output file is checked too: it must end with the
# command's last (partial) line, start with the cap header (100 MB is over
# the default 32 MiB cap), and header count + content must add up to the
# 100,000,000 bytes the command printed.
#
# Env: RUNS (default 5, at least 5), RSS_RUNS (default 2).
#      STREAM: lines (default), cr (one progress bar redrawn with \r, no
#      newline at all) or bars (two bars, the lower one redrawn, then
#      \x1b[A back up to the upper one). For cr and bars the output file must
#      hold the bars' last frames, a line each.
#      PANE: the panes' size, WxH (default 80x24), e.g. 500x200 for the RSS
#      target at the largest pane size.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-5}
RSS_RUNS=${RSS_RUNS:-2}
TARGET=1.25
RSS_TARGET_MB=20
BYTES=100000000
LINE='the quick brown fox jumps over the lazy dog 0123456789'
STREAM=${STREAM:-lines}
PANE=${PANE:-80x24}
export BENCH_PANE=$PANE
case $STREAM in
lines) CMD="sleep 0.2; yes '$LINE' | head -c $BYTES" ;;
cr) CMD="sleep 0.2; yes ' 42%|################                        | 420/1000 [00:01<00:02, 300it/s]' | tr '\\n' '\\r' | head -c $BYTES" ;;
bars) CMD="sleep 0.2; yes \"\$(printf '\\r\\033[2Kinner  17%%|######          | 17/100\\033[A\\r\\033[2Kouter  42%%|################| 42/100')\" | head -c $BYTES" ;;
*) echo "capture: STREAM must be lines, cr or bars" >&2; exit 2 ;;
esac
# What the command prints: whole lines and then a partial one.
LINES=$((BYTES / (${#LINE} + 1)))
LAST_PARTIAL=${LINE:0:$((BYTES - LINES * (${#LINE} + 1)))}
# The raw pane stream the baseline file gets: the terminal turns LF into CRLF.
RAW_BYTES=$((BYTES + LINES))

bench_setup
bench_machine
size=$(tmux -S "$sock" display-message -p -t '=qtask:' '#{window_width}x#{window_height}')
[ "$size" = "$PANE" ] || { echo "capture: panes are $size, not $PANE" >&2; exit 1; }
srv=$(tmux -S "$sock" display-message -p '#{pid}')
tck=$(getconf CLK_TCK)

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }

# cpu_ticks PID FIRST LAST: sum of /proc/PID/stat fields FIRST..LAST
# (14 utime, 15 stime, 16 cutime, 17 cstime). The command name (field 2,
# "tmux: server") may hold spaces, so split after its closing parenthesis.
cpu_ticks() {
	local st f i sum=0
	st=$(<"/proc/$1/stat")
	read -ra f <<<"${st##*) }"
	for ((i = $2; i <= $3; i++)); do sum=$((sum + f[i - 3])); done
	echo "$sum"
}
# The tmux server itself plus every child it has reaped; and this script's
# reaped children (the qtask and tmux clients it ran).
server_cpu() { cpu_ticks "$srv" 14 17; }
client_cpu() { cpu_ticks $$ 16 17; }
cpu_seconds() { awk -v t="$1" -v hz="$tck" 'BEGIN { printf "%.2f", t / hz }'; }

# settle_all: settle, then make sure the server has reaped its children, so
# their CPU time is in its cutime/cstime. tmux 3.3a sometimes leaves a
# pipe-pane child that exited before its pane as a zombie until its next
# SIGCHLD; this private server gets one (its handler only reaps).
settle_all() {
	"$tmp/settle"
	for _ in $(seq 100); do
		[[ $(ps -o stat= --ppid "$srv") == *Z* ]] || return 0
		kill -CHLD "$srv"
		sleep 0.01
	done
}

# rss_poll ID: print the largest VmHWM (kB) of the task's wrapper,
# polling every 50 ms until it exits. tmux 3.3a sometimes leaves a pipe-pane
# child that exits before its pane unreaped until its next SIGCHLD, so a
# zombie counts as gone.
rss_poll() {
	local id=$1 pid="" max=0 state=R key val _
	for _ in $(seq 200); do
		pid=$(pgrep -n -f -- "_exec .*$id") && break
		sleep 0.05
	done
	[ -n "$pid" ] || { echo 0; return; }
	while [ "$state" != Z ] && [ -r "/proc/$pid/status" ]; do
		while read -r key val _; do
			case $key in
			State:) state=$val ;;
			VmHWM:) if [ "$val" -gt "$max" ]; then max=$val; fi ;;
			esac
		done <"/proc/$pid/status" 2>/dev/null || true
		sleep 0.05
	done
	echo "$max"
}

# run_qtask N [rss]: one qtask run, which checks the output file. A timed
# run (N > 0) appends wall and CPU seconds to $tmp/q.*; an rss run, untimed,
# polls the wrapper and appends its peak RSS (kB) to $tmp/q.rss.
run_qtask() {
	local n=$1 mode=${2:-} s e s0 c0 c1 out id poller="" rss=0 file size first dropped hlen last total cpu
	settle_all
	s0=$(server_cpu) c0=$(client_cpu)
	s=$EPOCHREALTIME
	out=$("$Q" run --bg --json -- "$CMD")
	[[ $out =~ \"id\":\ \"([0-9a-f]+)\" ]] || { echo "capture: no id in: $out" >&2; exit 1; }
	id=${BASH_REMATCH[1]}
	if [ "$mode" = rss ]; then
		rss_poll "$id" >"$tmp/rss.$n" &
		poller=$!
	fi
	"$Q" wait "$id" >/dev/null
	e=$EPOCHREALTIME
	if [ -n "$poller" ]; then
		wait "$poller"
		rss=$(<"$tmp/rss.$n")
	fi
	c1=$(client_cpu)
	settle_all
	cpu=$(cpu_seconds $(( $(server_cpu) - s0 + c1 - c0 )))
	[[ $out =~ \"output_path\":\ \"([^\"]+)\" ]]
	file=${BASH_REMATCH[1]}
	size=$(stat -c %s "$file")
	if [ "$STREAM" != lines ]; then
		check_bars "$file"
	else
	first=$(head -n 1 "$file")
	# [qtask: output capped at N bytes; M earlier bytes dropped]
	[[ $first =~ ^\[qtask:\ output\ capped\ at\ ([0-9]+)\ bytes\;\ ([0-9]+)\ earlier\ bytes\ dropped\]$ ]] ||
		{ echo "capture: $file does not start with the cap header: $first" >&2; exit 1; }
	dropped=${BASH_REMATCH[2]}
	hlen=$((${#first} + 1))
	last=$(tail -n 1 "$file")
	[ "$last" = "$LAST_PARTIAL" ] || { echo "capture: $file ends with '$last', want '$LAST_PARTIAL'" >&2; exit 1; }
	# Content + dropped is the whole stream: BYTES, or BYTES+1 if the
	# partial last line was given its newline.
	total=$((dropped + size - hlen))
	[ "$total" -eq "$BYTES" ] || [ "$total" -eq $((BYTES + 1)) ] ||
		{ echo "capture: $file accounts for $total bytes, want $BYTES" >&2; exit 1; }
	fi
	rm -f "$file"
	if [ "$mode" = rss ]; then
		echo "$rss" >>"$tmp/q.rss"
		printf '  qtask rss #%d  untimed  wrapper peak RSS %.1f MB  file %d bytes, ends with the last line\n' \
			"$n" "$(awk -v k="$rss" 'BEGIN { print k * 1024 / 1e6 }')" "$size"
		return
	fi
	if [ "$n" -gt 0 ]; then
		elapsed "$s" "$e" >>"$tmp/q.times"; echo >>"$tmp/q.times"
		echo "$cpu" >>"$tmp/q.cpu"
	fi
	printf '  qtask #%d  %6.3f s  cpu %5.2f s  file %d bytes, ends with the last line\n' \
		"$n" "$(elapsed "$s" "$e")" "$cpu" "$size"
}

# check_bars FILE: a redraw stream leaves its bars' last frames, one line
# each (the last frame may be cut short by head -c).
check_bars() {
	local lines
	lines=$(wc -l <"$1")
	case $STREAM in
	cr) [ "$lines" -eq 1 ] && grep -q '^ 42%|' "$1" ;;
	bars) [ "$lines" -eq 2 ] && grep -q '^outer  42%|' "$1" && grep -q '^inner  17%|' "$1" ;;
	esac || { echo "capture: $STREAM stream left $lines lines in $1: $(head -c 300 "$1")" >&2; exit 1; }
}

# run_tmux N: one timed baseline run. Appends wall and CPU seconds to $tmp/t.*.
run_tmux() {
	local n=$1 s e s0 c0 c1 pane file=$tmp/raw.$1 at_end size late cpu
	settle_all
	s0=$(server_cpu) c0=$(client_cpu)
	s=$EPOCHREALTIME
	pane=$(tmux -S "$sock" new-window -d -P -F '#{pane_id}' -t '=qtask:' -- \
		sh -c "$CMD; tmux -S '$sock' wait-for -S done-$n")
	tmux -S "$sock" pipe-pane -t "$pane" "cat > $file; : > $file.closed"
	tmux -S "$sock" wait-for "done-$n"
	e=$EPOCHREALTIME
	c1=$(client_cpu)
	at_end=$(stat -c %s "$file")
	# Not timed: let the pipe drain so the file can be checked.
	for _ in $(seq 1000); do [ -e "$file.closed" ] && break; sleep 0.01; done
	[ -e "$file.closed" ] || { echo "capture: baseline pipe still open 10 s after the command ended" >&2; exit 1; }
	settle_all
	cpu=$(cpu_seconds $(( $(server_cpu) - s0 + c1 - c0 )))
	size=$(stat -c %s "$file")
	# The command sleeps 0.2 s so that pipe-pane is attached before its first
	# byte; on a loaded machine it may still come late and miss the start.
	late=""
	if [ "$STREAM" = lines ] && [ "$size" -ne "$RAW_BYTES" ]; then
		late="  WARNING: pipe attached late, missed $((RAW_BYTES - size)) bytes"
		echo "$n" >>"$tmp/t.late"
	fi
	rm -f "$file" "$file.closed"
	if [ "$n" -gt 0 ]; then
		elapsed "$s" "$e" >>"$tmp/t.times"; echo >>"$tmp/t.times"
		echo "$cpu" >>"$tmp/t.cpu"
	fi
	printf '  tmux  #%d  %6.3f s  cpu %5.2f s  file %d bytes at wait-for, %d when the pipe closed%s\n' \
		"$n" "$(elapsed "$s" "$e")" "$cpu" "$at_end" "$size" "$late"
}

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "capture: $BYTES bytes of $STREAM through a $PANE pane, $RUNS runs per side, alternating (run #0 is an untimed warm-up)"
for n in $(seq 0 "$RUNS"); do
	run_tmux "$n"
	run_qtask "$n"
done
for n in $(seq 1 "$RSS_RUNS"); do
	run_qtask "$n" rss
done

tm=$(median "$tmp/t.times")
qm=$(median "$tmp/q.times")
ratio=$(bench_ratio "$qm" "$tm")
tc=$(median "$tmp/t.cpu")
qc=$(median "$tmp/q.cpu")
rss_kb=$(sort -g "$tmp/q.rss" | tail -n 1)
rss_mb=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
rss_verdict=$(awk -v m="$rss_mb" -v t="$RSS_TARGET_MB" 'BEGIN { print (m < t ? "PASS" : "MISS") }')
echo
echo "capture: tmux pipe-pane median $(printf '%.3f' "$tm") s, qtask run+wait median $(printf '%.3f' "$qm") s"
echo "capture: ratio ${ratio}x, target <= ${TARGET}x: $(bench_verdict "$ratio" "$TARGET")"
echo "capture: CPU time per run (medians): tmux side ${tc} s, qtask side ${qc} s ($(bench_ratio "$qc" "$tc")x)"
if [ -s "$tmp/t.late" ]; then
	echo "capture: WARNING: in $(wc -l <"$tmp/t.late") baseline run(s) the pipe attached after output began (a loaded machine)"
fi
echo "capture: wrapper (capture included) peak RSS ${rss_mb} MB (max of $RSS_RUNS untimed runs), target < ${RSS_TARGET_MB} MB: $rss_verdict"
bench_result "bench=capture" "baseline=tmux-pipe-pane-cat" "baseline_ms=$(bench_ms "$tm")" \
	"qtask_ms=$(bench_ms "$qm")" "ratio=$ratio" "target=<=${TARGET}x" "verdict=$(bench_verdict "$ratio" "$TARGET")"
bench_result "bench=capture-rss" "baseline=-" "baseline_ms=-" "qtask_ms=-" "ratio=${rss_mb}MB" \
	"target=<${RSS_TARGET_MB}MB" "verdict=$rss_verdict"

#!/bin/sh
# record.sh records tmux's rendering of each case in cases.txt: a pane of the
# case's size is fed the case's bytes and resized between them
# (resize-window), and capture-pane -p -J -S - -E - is kept as NAME.want.
# TestResizeOracle replays the same steps through the renderer.
#
# Usage: record.sh [NAME...]   (default: every case)
# Needs tmux; never touches the user's tmux server.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'for s in "$work"/sock-*; do tmux -S "$s" kill-server 2>/dev/null || true; done; rm -rf "$work"' EXIT
echo 'set -g history-limit 100000' >"$work/conf"
T() { tmux -S "$work/sock-$name" -f "$work/conf" "$@"; }

grep -v '^#' "$here/cases.txt" | while IFS= read -r line; do
	name=${line%%|*}
	if [ $# -gt 0 ] && ! echo " $* " | grep -q " $name "; then
		continue
	fi
	rest=${line#*|}
	size=${rest%%|*}
	steps=${rest#*|}
	rm -f "$work/fifo"
	mkfifo "$work/fifo"
	T new-session -d -s "$name" -x "${size%x*}" -y "${size#*x}" "stty -opost; exec cat '$work/fifo'"
	exec 3>"$work/fifo"
	while [ -n "$steps" ]; do
		step=${steps%%|*}
		case $steps in *"|"*) steps=${steps#*|} ;; *) steps= ;; esac
		case $step in
		p:*) printf "${step#p:}" >&3 ;;
		r:*) s=${step#r:}; T resize-window -t "$name" -x "${s%x*}" -y "${s#*x}" ;;
		esac
		sleep 0.3
	done
	T capture-pane -p -J -S - -E - -t "$name" >"$here/$name.want"
	T kill-server
	exec 3>&-
	echo "$name"
done

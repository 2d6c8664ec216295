#!/bin/sh
# record.sh records the oracle corpus: for each case it runs a program in a
# private tmux server's 80x24 pane, keeps the bytes the pane received
# (pipe-pane) as NAME.raw, then replays exactly those bytes into a fresh
# live pane (stty -opost, so the pty adds nothing) and keeps tmux's rendering,
# capture-pane -p -J -S - -E -, as NAME.want. TestOracle compares the
# renderer's output with NAME.want.
#
# Usage: record.sh [NAME...]   (default: every case below)
# Needs tmux, go, git, curl, man, vim, tabs (ncurses); never touches the user's tmux server.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
gen="$here/../gen"
work=$(mktemp -d)
trap 'tmux -S "$work/sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
T() { tmux -S "$work/sock" -f /dev/null "$@"; }

# The programs behind each case. gen cases imitate programs that are not
# installed here (or need the network); the others are the real thing.
go build -o "$work/gen" "$gen"
mkdir -p "$work/ls/dir1" "$work/ls/dir2"
touch "$work/ls/file.txt" "$work/ls/script.sh" "$work/ls/archive.tar.gz"
chmod +x "$work/ls/script.sh"
ln -s file.txt "$work/ls/link"
git -C "$work" init -q repo
for i in 1 2 3 4 5 6 7 8 9 10; do
	head -c 200000 /dev/urandom >"$work/repo/f$i"
	git -C "$work/repo" add "f$i"
	git -C "$work/repo" -c user.name=t -c user.email=t@t commit -qm "c$i"
done
head -c 20000000 /dev/zero >"$work/big"

cmd_for() {
	case $1 in
	ls-color) echo "cd $work/ls && ls -l --color=always && ls --color=always" ;;
	git-clone) echo "git clone --progress --no-local $work/repo $work/clone-\$\$" ;;
	man) echo "GROFF_NO_SGR=1 MANWIDTH=80 MANPAGER=cat PAGER=cat man 1 ls | head -60" ;;
	curl) echo "curl -o /dev/null file://$work/big" ;;
	tabstops) echo "tabs -4; $work/gen tabstops" ;;
	vim) echo "vim -u NONE -N -c 'redraw' -c 'q' /etc/services; echo after vim" ;;
	*) echo "$work/gen $1" ;;
	esac
}

cases=${*:-"curl-meter pv-meter tqdm tqdm-nested rich-live npm-spinner apt-fancy unicode tabs tabstops wrap erase scroll insert clear fullscreen prompt-erase ls-color git-clone man curl vim"}

T new-session -d -x 80 -y 24 -s rec
T set -g history-limit 200000
T set -g remain-on-exit on
T set -g default-size 80x24

# run_pane CMD: runs CMD in a new 80x24 pane once 'go' exists, and prints
# the pane id.
run_pane() {
	rm -f "$work/go"
	T new-window -d -P -F '#{pane_id}' -t rec: -- sh -c "until [ -e $work/go ]; do sleep 0.01; done; $1"
}

wait_dead() {
	until [ "$(T display-message -p -t "$1" '#{pane_dead}')" = 1 ]; do sleep 0.05; done
}

for name in $cases; do
	raw="$here/$name.raw"
	pane=$(run_pane "$(cmd_for "$name")")
	T pipe-pane -t "$pane" "cat >'$work/raw'; touch '$work/raw.done'"
	touch "$work/go"
	wait_dead "$pane"
	rm -f "$work/raw.done"
	T kill-pane -t "$pane"
	until [ -e "$work/raw.done" ]; do sleep 0.05; done
	cp "$work/raw" "$raw"

	# The pane stays alive while it is captured: a dead pane gets tmux's
	# "Pane is dead" line.
	rm -f "$work/shown"
	pane=$(run_pane "stty -opost; cat '$raw'; touch '$work/shown'; exec sleep 1000")
	touch "$work/go"
	until [ -e "$work/shown" ]; do sleep 0.05; done
	# tmux may still be reading the pty: capture until it stops changing.
	T capture-pane -p -J -S - -E - -t "$pane" >"$work/a"
	while sleep 0.2; T capture-pane -p -J -S - -E - -t "$pane" >"$work/b"; ! cmp -s "$work/a" "$work/b"; do
		mv "$work/b" "$work/a"
	done
	mv "$work/b" "$here/$name.want"
	T kill-pane -t "$pane"
	echo "$name: $(wc -c <"$raw") bytes -> $(wc -l <"$here/$name.want") lines"
done

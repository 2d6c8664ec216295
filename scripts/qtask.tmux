#!/usr/bin/env bash
# qtask's tmux plugin. With TPM:   set -g @plugin 'qtask/qtask'
#   (TPM runs ../qtask.tmux, the top-level entry point, which runs this)
# Without:                         run-shell /path/to/qtask/scripts/qtask.tmux
#
# This script only finds the qtask binary: on PATH, else in the plugin's own
# bin/, else built there when Go is installed. Everything else (reading the
# @qtask-* options, binding keys) is `qtask init tmux`, in Go. tmux runs this
# with $TMUX set, so every tmux and qtask call below reaches this server.
# Options: docs/TMUX.md.

plugin_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

qtask="$(command -v qtask)"
if [ -z "$qtask" ] && [ -x "$plugin_dir/bin/qtask" ]; then
	qtask="$plugin_dir/bin/qtask"
fi
if [ -z "$qtask" ] && command -v go >/dev/null && [ -f "$plugin_dir/go.mod" ]; then
	if (cd "$plugin_dir" && CGO_ENABLED=0 go build -o bin/ ./cmd/...) >/dev/null 2>&1; then
		qtask="$plugin_dir/bin/qtask"
	fi
fi
if [ -z "$qtask" ]; then
	tmux display-message "qtask: not installed; install Go and reload tmux.conf, or put qtask on PATH (see $plugin_dir/docs/TMUX.md)"
	exit 0
fi
exec "$qtask" init tmux

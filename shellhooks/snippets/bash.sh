# qtask shell hooks for bash. Load with: eval "$(qtask init bash)"
# Per command they write one small file with shell builtins (no process is
# started), so the prompt stays fast, and they print nothing, ever.
if [[ -n "${TMUX_PANE:-}" && $- == *i* && -z "${__qtask_hooked:-}" ]]; then
  __qtask_hooked=1
  __qtask_bin={{.Bin}}
  __qtask_file={{.State}}/panes/"${TMUX_PANE#%}"
  __qtask_armed=
  __qtask_prev_debug=
  # The command line comes from bash-preexec when it hands one over; else
  # from history, when the line was saved as the entry the prompt expected;
  # else (ignorespace, HISTIGNORE, history off) from $BASH_COMMAND. (No
  # comments inside the functions: with interactive_comments off they would
  # be taken for commands.)
  __qtask_preexec() {
    [[ -n "$__qtask_armed" && -z "${COMP_LINE:-}" ]] || return 0
    __qtask_armed=
    if [[ -n "${1:-}" ]]; then
      printf '%s c\n%s\n' "$$" "$1" 2>/dev/null >|"$__qtask_file"
    elif [[ -o history && "$HISTCMD" == "$__qtask_hist" ]]; then
      { printf '%s h\n' "$$"; HISTTIMEFORMAT= builtin history 1; } 2>/dev/null >|"$__qtask_file"
    else
      printf '%s c\n%s\n' "$$" "$BASH_COMMAND" 2>/dev/null >|"$__qtask_file"
    fi
    return 0
  }
  __qtask_debug() {
    __qtask_preexec
    [[ -z "$__qtask_prev_debug" ]] || eval "$__qtask_prev_debug"
  }
  __qtask_precmd() {
    local s=$?
    if [[ -e "$__qtask_file.promoted" ]]; then
      "$__qtask_bin" _pane-done --state-dir {{.State}} --status "$s" 2>/dev/null
    fi
    : 2>/dev/null >|"$__qtask_file"
    return $s
  }
  __qtask_hist=
  __qtask_arm() {
    __qtask_armed=1
    __qtask_hist=$HISTCMD
  }
  if [[ -n "${bash_preexec_imported:-}" ]]; then
    __qtask_bp_preexec() {
      __qtask_armed=1
      __qtask_preexec "$1"
    }
    preexec_functions+=(__qtask_bp_preexec)
    precmd_functions=(__qtask_precmd "${precmd_functions[@]}")
  else
    if [[ -n "$(trap -p DEBUG)" ]]; then
      eval "__qtask_words=( $(trap -p DEBUG) )"
      __qtask_prev_debug=${__qtask_words[2]}
      unset __qtask_words
    fi
    trap '__qtask_debug' DEBUG
    if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
      PROMPT_COMMAND=(__qtask_precmd "${PROMPT_COMMAND[@]}" __qtask_arm)
    else
      # Lines, not ';': a PROMPT_COMMAND that ends in ';' or '&' (as
      # pyenv-virtualenv leaves it) stays valid.
      PROMPT_COMMAND="__qtask_precmd"$'\n'"${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}__qtask_arm"
    fi
  fi
fi

# qtask shell hooks for fish. Load with: qtask init fish | source
# Per command they write one small file with fish builtins (no process is
# started), so the prompt stays fast, and they print nothing, ever.
if set -q TMUX_PANE; and status is-interactive; and not set -q __qtask_hooked
    set -g __qtask_hooked 1
    set -g __qtask_bin {{.Bin}}
    set -g __qtask_state {{.State}}
    set -g __qtask_dir $__qtask_state/panes
    set -g __qtask_file $__qtask_dir/(string replace -- '%' '' $TMUX_PANE)
    function __qtask_preexec --on-event fish_preexec
        test -d $__qtask_dir; and test -w $__qtask_dir; or return 0
        printf '%s c\n%s\n' $fish_pid "$argv" >$__qtask_file 2>/dev/null
        return 0
    end
    function __qtask_postexec --on-event fish_postexec
        set -l s $status
        test -d $__qtask_dir; and test -w $__qtask_dir; or return 0
        if test -e $__qtask_file.promoted
            $__qtask_bin _pane-done --state-dir $__qtask_state --status $s 2>/dev/null
        end
        true >$__qtask_file 2>/dev/null
        return 0
    end
end

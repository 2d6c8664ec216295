package tasks

// The wrapper protocol: the hidden commands qtask has tmux and the shell
// hooks run on its behalf, outside the caller's environment, so each gets
// the state directory as a flag. Their names are defined here once: tasks
// builds their argv (helperArgv), the CLI and qtask-exec parse it, and the
// shell hooks' snippets call PaneDoneVerb (a shellhooks test holds them to
// it). The pane pipe's helper, capture.HandoverVerb, is the capture's.
const (
	// ExecVerb is a task's wrapper, the first process of its pane:
	// `_exec --state-dir DIR ID`.
	ExecVerb = "_exec"
	// CaptureVerb is an adopted pane's capture, the reading end of its
	// pipe-pane: `_capture --state-dir DIR ID`.
	CaptureVerb = "_capture"
	// PaneDoneVerb is run by the prompt hook of a shell whose command was
	// promoted, once it ends: `_pane-done --state-dir DIR --status N`.
	PaneDoneVerb = "_pane-done"
	// StateDirFlag names the state directory in the first three.
	StateDirFlag = "state-dir"
)

// helperArgv is the argv of verb (ExecVerb or CaptureVerb) for task id in
// this store, run by the program that lives as long as the task.
func (s *Store) helperArgv(self, verb, id string) []string {
	return []string{wrapperProgram(self), verb, "--" + StateDirFlag, s.dir, id}
}

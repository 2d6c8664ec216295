package tasks

import "github.com/qtask/qtask/tasks/procs"

// Which agent session a process works for, when the agent does not tell
// the processes it starts (gemini-cli): its hooks note the agent's
// process, and a qtask it runs finds the note among its ancestors. The
// notes and the walk are the queue's (notify, agentproc.go); the store
// gives it the machine's processes (queueProcs).

// NoteAgentProcess notes that the agent process this hook runs under works
// for scope: see notify.Queue.NoteAgentProcess.
func (s *Store) NoteAgentProcess(marker, scope string) error {
	return s.queue.NoteAgentProcess(marker, scope)
}

// AgentProcessScope is the scope noted for the nearest ancestor of this
// process that is a noted agent process (NoteAgentProcess), "" when there
// is none: a person's process, or an agent whose hooks noted nothing.
func (s *Store) AgentProcessScope() string { return s.queue.AgentProcessScope() }

// Parent is pid's parent and start time, as the queue's walk up the
// process tree reads them.
func (queueProcs) Parent(pid int) (int, uint64, error) {
	st, err := procs.ReadStat(pid)
	return st.PPID, st.StartTime, err
}

// Environ is pid's environment, NUL-separated.
func (queueProcs) Environ(pid int) ([]byte, error) { return procs.ReadFile(pid, "environ") }

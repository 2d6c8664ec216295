package notify

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/qtask/qtask/tasks/statefs"
)

// Which agent session a process works for, when the agent does not tell
// the processes it starts: gemini-cli gives its session id to its hooks
// ($GEMINI_SESSION_ID) but neither to its shell commands nor to its MCP
// servers (measured with 0.61.0). Its hooks note the agent's process, by
// pid and start time (a recycled pid never matches), with the session's
// scope, beside the presences; a qtask that the agent's shell tool or MCP
// server runs finds the note among its ancestors, and its tasks are the
// session's. A person's shell descends from no agent, so a person's task
// never finds one.

// maxAncestors bounds the walk up the process tree: an agent's command
// sits a few shells below it.
const maxAncestors = 32

// agentProcPrefix names the notes, beside the presences in "agents".
const agentProcPrefix = "proc-"

func (q *Queue) agentProcPath(pid int, start uint64) string {
	return filepath.Join(q.agentsDir(), agentProcPrefix+strconv.Itoa(pid)+"-"+strconv.FormatUint(start, 10))
}

// NoteAgentProcess notes that the agent process this hook runs under works
// for scope. That process is the hook's nearest ancestor whose environment
// does not hold marker ("VAR=VALUE", the session variable the agent set
// for the hook): the agent sets it for what it starts, not for itself. A
// note already there is left alone; writing a new one drops the notes of
// processes that are gone.
func (q *Queue) NoteAgentProcess(marker, scope string) error {
	pid, start, ok := q.agentAncestor([]byte(marker))
	if !ok {
		return nil
	}
	path := q.agentProcPath(pid, start)
	if data, err := statefs.ReadOwn(path); err == nil && string(data) == scope {
		return nil
	}
	if err := statefs.MkdirPrivate(q.agentsDir()); err != nil {
		return err
	}
	q.dropGoneAgentProcs()
	return statefs.WriteAtomic(path, []byte(scope))
}

// agentAncestor is the nearest ancestor of this process whose environment
// lacks marker; ok is false when none could be read (another user's
// process, no procfs) before one was found.
func (q *Queue) agentAncestor(marker []byte) (pid int, start uint64, ok bool) {
	pid = os.Getppid()
	for range maxAncestors {
		if pid <= 1 {
			return 0, 0, false
		}
		ppid, start, err := q.procs.Parent(pid)
		if err != nil {
			return 0, 0, false
		}
		environ, err := q.procs.Environ(pid)
		if err != nil {
			return 0, 0, false
		}
		if !hasEntry(environ, marker) {
			return pid, start, true
		}
		pid = ppid
	}
	return 0, 0, false
}

// hasEntry reports whether the NUL-separated environment holds entry.
func hasEntry(environ, entry []byte) bool {
	for e := range bytes.SplitSeq(environ, []byte{0}) {
		if bytes.Equal(e, entry) {
			return true
		}
	}
	return false
}

// dropGoneAgentProcs removes the notes of agent processes that have ended.
func (q *Queue) dropGoneAgentProcs() {
	dir := q.agentsDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		id, ok := strings.CutPrefix(e.Name(), agentProcPrefix)
		if !ok {
			continue
		}
		p, st, _ := strings.Cut(id, "-")
		pid, err1 := strconv.Atoi(p)
		start, err2 := strconv.ParseUint(st, 10, 64)
		if err1 == nil && err2 == nil && !q.procs.Same(pid, start) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// AgentProcessScope is the scope noted for the nearest ancestor of this
// process that is a noted agent process (NoteAgentProcess), "" when there
// is none: a person's process, or an agent whose hooks noted nothing.
// Every start asks, a person's included: the notes are listed first (one
// read of a directory), and an ancestor is looked up only while there are
// notes it could match, rather than its stat and its note opened for
// each of the several processes above a shell.
func (q *Queue) AgentProcessScope() string {
	notes := q.agentProcNotes()
	pid := os.Getppid()
	for range maxAncestors {
		if pid <= 1 || len(notes) == 0 {
			return ""
		}
		ppid, start, err := q.procs.Parent(pid)
		if err != nil {
			return ""
		}
		if path := q.agentProcPath(pid, start); notes[filepath.Base(path)] {
			if data, err := statefs.ReadOwn(path); err == nil && len(data) > 0 {
				return string(data)
			}
		}
		pid = ppid
	}
	return ""
}

// agentProcNotes is the names of the notes of agent processes, nil when
// there are none (or no agents directory).
func (q *Queue) agentProcNotes() map[string]bool {
	entries, err := os.ReadDir(q.agentsDir())
	if err != nil {
		return nil
	}
	var notes map[string]bool
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, agentProcPrefix) {
			if notes == nil {
				notes = map[string]bool{}
			}
			notes[name] = true
		}
	}
	return notes
}

package tasks

import (
	"context"
	"fmt"
	"sync"

	"github.com/qtask/qtask/tmux"
)

// fakePanes is a tmux server in memory: panes in sessions by name. It
// records what was asked of it, and onPaneInfo, if set, runs before
// PaneInfo answers (to end a task at that moment, as a race would).
type fakePanes struct {
	mu       sync.Mutex
	sessions map[string]tmux.SessionID
	panes    map[tmux.PaneID]tmux.PaneInfo
	nextPane int
	calls    []string

	onPaneInfo func(tmux.PaneID)
	failStart  bool
}

func newFakePanes(sessions ...string) *fakePanes {
	f := &fakePanes{sessions: map[string]tmux.SessionID{}, panes: map[tmux.PaneID]tmux.PaneInfo{}, nextPane: 100}
	for i, name := range sessions {
		f.sessions[name] = tmux.SessionID(fmt.Sprintf("$%d", i))
	}
	return f
}

// option opens a store whose tmux calls go through f.
func (f *fakePanes) option() option {
	return withPanes(func(tmux.Server) Panes { return f })
}

// addPane opens a pane in session.
func (f *fakePanes) addPane(session string) tmux.PaneID {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextPane++
	pane := tmux.PaneID(fmt.Sprintf("%%%d", f.nextPane))
	f.panes[pane] = tmux.PaneInfo{Pane: pane, Session: f.sessions[session], Path: "/"}
	return pane
}

func (f *fakePanes) called(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
}

// StartWindow opens the window in spec.SessionID if set, else in the
// session named spec.Session; failStart refuses it.
func (f *fakePanes) StartWindow(_ context.Context, spec tmux.WindowSpec) (tmux.PaneID, int, error) {
	where := spec.Session
	for name, id := range f.sessions {
		if spec.SessionID != "" && id == spec.SessionID {
			where = name
		}
	}
	f.called("start-window in %s", where)
	if spec.Meanwhile != nil {
		spec.Meanwhile()
	}
	if f.failStart {
		return "", 0, tmux.ErrNoServer
	}
	return f.addPane(where), 0, nil
}

func (f *fakePanes) SessionOf(_ context.Context, pane tmux.PaneID) (tmux.SessionID, error) {
	info, err := f.PaneInfo(context.Background(), pane)
	return info.Session, err
}

func (f *fakePanes) SessionID(_ context.Context, name string) (tmux.SessionID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id, ok := f.sessions[name]; ok {
		return id, nil
	}
	return "", tmux.ErrNotFound
}

func (f *fakePanes) PaneInfo(_ context.Context, pane tmux.PaneID) (tmux.PaneInfo, error) {
	if f.onPaneInfo != nil {
		f.onPaneInfo(pane)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if info, ok := f.panes[pane]; ok {
		return info, nil
	}
	return tmux.PaneInfo{}, tmux.ErrNotFound
}

func (f *fakePanes) MovePaneToSession(_ context.Context, info tmux.PaneInfo, session string) error {
	f.called("move %s to %s", info.Pane, session)
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.sessions[session]
	if !ok {
		id = tmux.SessionID(fmt.Sprintf("$%d", len(f.sessions)))
		f.sessions[session] = id
	}
	info.Session = id
	f.panes[info.Pane] = info
	return nil
}

func (f *fakePanes) CaptureAndPipe(_ context.Context, pane tmux.PaneID, argv []string) (tmux.PaneSnapshot, error) {
	f.called("capture-and-pipe %s", pane)
	return tmux.PaneSnapshot{History: []string{"$ make", "building  "}, Screen: []string{"step 1 of 3", ""}, CursorX: 11}, nil
}

func (f *fakePanes) PipeToCommand(_ context.Context, pane tmux.PaneID, command string) error {
	f.called("pipe %s", pane)
	return nil
}

func (f *fakePanes) ReplaceWithShell(_ context.Context, info tmux.PaneInfo, session, windowName string, _ tmux.ShellSpec) (tmux.PaneID, error) {
	f.called("replace %s with a shell, moving it to %s", info.Pane, session)
	return f.addPane("user"), nil
}

func (f *fakePanes) KillPane(_ context.Context, pane tmux.PaneID) error {
	f.called("kill %s", pane)
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.panes, pane)
	return nil
}

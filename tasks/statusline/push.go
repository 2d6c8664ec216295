package statusline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/qtask/qtask/tmux"
)

// statusOption is the tmux user option qtask keeps the status segment
// in, for `#{@qtask_status}` in status-right: free for tmux to show at
// every refresh, unlike a `#()` command.
const statusOption = "@qtask_status"

// tmuxTimeout bounds each tmux call that updates statusOption or tells
// clients a task ended: a hung server must not hold up the task that
// called.
const tmuxTimeout = 2 * time.Second

// pushedName is the file, in the counts directory, where pushes keep the
// servers that show the segment and what the last push set on each.
const pushedName = ".pushed"

// pushedServer is one server's entry in pushedName, keyed by
// tmux.Server.String (its socket path).
type pushedServer struct {
	// Shows: the plugin loaded on this server (Refresh), so every push
	// goes to it, whichever server the task that changed the counts runs
	// on. A server whose socket is gone, or that answers that it is not
	// running, is dropped.
	Shows bool `json:"shows,omitempty"`
	// Run and Value are the memo: the push to the server's run Run (its
	// tmux.Server.Incarnation) set Value. Run "" is no memo.
	Run   string `json:"run,omitempty"`
	Value string `json:"value,omitempty"`
}

// Push sets statusOption to the current counts, rendered with format, on
// every server that shows the segment: each where the plugin loaded
// (Refresh), and own (the server of the task whose start or end changed
// the counts). Callers have changed the counts already (under their state
// lock); the push itself holds only the push lock (a tmux call must not
// hold up every other transition), which serializes pushes so that the
// last one made read the last counts. A server that is gone or refuses is not the
// task's problem: errors are dropped.
func (l Line) Push(format string, own ...tmux.Server) {
	l.pushTo(own, format, nil)
}

// Refresh sets the segment on server from the counts as they are, for the
// plugin's load: always, whatever the last push set. From then on every
// push goes to server too, while it runs.
func (l Line) Refresh(server tmux.Server, format string) error {
	return l.pushTo([]tmux.Server{server}, format, &server)
}

// pushTo sets the status segment on the servers that show it (see
// pushedServer) and on own, each unless the last push set this very value
// on this run of it: most task ends leave the segment as it was (a quick
// task that was never counted on it, a completed one among others), and a
// tmux call costs the server more than the task's whole bookkeeping. A
// server started again on the same socket has lost the option and gets it
// again. refresh, if set, is a server the plugin has just loaded on: it is
// added to those that show the segment and set whatever the memo says; its
// error is returned.
func (l Line) pushTo(own []tmux.Server, format string, refresh *tmux.Server) error {
	if err := l.dir.Mkdir(countsName("")); err != nil {
		return err
	}
	unlock, err := l.dir.Lock(context.Background(), filepath.Join(countsName(""), ".push-lock"))
	if err != nil {
		return fmt.Errorf("lock status push: %w", err)
	}
	defer unlock()
	counts, err := l.Counts()
	if err != nil {
		return err
	}
	value := Format(format, counts)
	path := filepath.Join(countsName(""), pushedName)
	pushed := map[string]pushedServer{}
	if data, err := l.dir.ReadFile(path); err == nil {
		json.Unmarshal(data, &pushed) // unreadable: no memo, one push more
	}
	servers := map[string]tmux.Server{}
	for key, p := range pushed {
		if server, err := tmux.ParseServer(key); err == nil && p.Shows {
			servers[key] = server
		}
	}
	for _, server := range own {
		servers[server.String()] = server
	}
	if refresh != nil {
		servers[refresh.String()] = *refresh
		pushed[refresh.String()] = pushedServer{Shows: true}
	}
	type push struct {
		key    string
		server tmux.Server
		run    string
	}
	var pushes []push
	changed := refresh != nil
	for key, server := range servers {
		p, run := pushed[key], server.Incarnation()
		switch {
		case run == "" && p.Shows:
			delete(pushed, key) // its socket is gone: so is the server
			changed = true
		case run != "" && p.Run == run && p.Value == value:
		default:
			pushes = append(pushes, push{key, server, run})
			if p.Run != "" {
				p.Run, p.Value = "", ""
				pushed[key], changed = p, true
			}
		}
	}
	if !changed && len(pushes) == 0 {
		return nil
	}
	// The memos of the servers about to be set go before they are set: a
	// file that cannot be written after the sets, or a push that dies
	// between the two, then costs one push more, never one less.
	if changed {
		l.writePushed(path, pushed)
	}
	// The servers are set at once: a second server costs the push hardly
	// more than one, and a hung one no more than its timeout.
	errs := make([]error, len(pushes))
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	var wg sync.WaitGroup
	for i, p := range pushes {
		wg.Go(func() { errs[i] = p.server.SetGlobalOption(ctx, statusOption, value) })
	}
	wg.Wait()
	cancel()
	var refreshErr error
	for i, p := range pushes {
		entry := pushed[p.key]
		switch err := errs[i]; {
		case errors.Is(err, tmux.ErrNoServer):
			delete(pushed, p.key)
		case err == nil && p.run != "":
			entry.Run, entry.Value = p.run, value
			pushed[p.key] = entry
		}
		if refresh != nil && p.key == refresh.String() {
			refreshErr = errs[i]
		}
	}
	l.writePushed(path, pushed) // under the push lock: no other push meanwhile
	return refreshErr
}

// writePushed writes pushedName at path, keeping only what a later push
// needs: the servers that show the segment, and the memos.
func (l Line) writePushed(path string, pushed map[string]pushedServer) {
	for key, p := range pushed {
		if !p.Shows && p.Run == "" {
			delete(pushed, key)
		}
	}
	if data, err := json.Marshal(pushed); err == nil {
		l.dir.WriteFile(path, data)
	}
}

package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/qtask/qtask/tmux"
)

// screenSeed is the screen an adopted pane showed when its pipe was
// attached. The capture starts its screen model on it, so that the
// program's redraws of that screen (a progress bar going on in place)
// apply to it, as they do in the pane, rather than start over below it.
type screenSeed struct {
	Rows []string `json:"rows"`
	// Hidden is how many of the first rows are not the task's output
	// (the prompt and the command line).
	Hidden    int  `json:"hidden"`
	CursorX   int  `json:"cursor_x"`
	CursorY   int  `json:"cursor_y"`
	Alternate bool `json:"alternate,omitempty"`
}

func (s *Store) seedPath(id string) string { return filepath.Join(s.tasksDir(), id+".seed") }

// splitSnapshot divides what an adopted pane showed, from line start of
// its history and screen on (what the command printed), into final text —
// the history's lines, which nothing can redraw any more — and the screen,
// which the capture goes on from.
func splitSnapshot(snap tmux.PaneSnapshot, start int) (string, screenSeed) {
	var final strings.Builder
	for _, line := range snap.History[min(start, len(snap.History)):] {
		final.WriteString(strings.TrimRight(line, " "))
		final.WriteByte('\n')
	}
	seed := screenSeed{Rows: snap.Screen, Hidden: max(start-len(snap.History), 0),
		CursorX: snap.CursorX, CursorY: snap.CursorY, Alternate: snap.Alternate}
	return final.String(), seed
}

// writeSeed leaves the seed for the capture of task id.
func (s *Store) writeSeed(id string, seed screenSeed) error {
	data, err := json.Marshal(seed)
	if err != nil {
		return fmt.Errorf("encode screen of task %s: %w", id, err)
	}
	return writeFileAtomic(s.seedPath(id), data)
}

// takeSeed reads and removes the seed of task id; ok is false when there
// is none (nothing was on the screen that is the task's).
func (s *Store) takeSeed(id string) (seed screenSeed, ok bool, err error) {
	path := s.seedPath(id)
	data, err := readOwnFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return seed, false, nil
	}
	os.Remove(path)
	if err == nil {
		err = json.Unmarshal(data, &seed)
	}
	if err != nil {
		return seed, false, fmt.Errorf("screen of task %s: %w", id, err)
	}
	return seed, true, nil
}

package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/qtask/qtask/tasks/capture"
	"github.com/qtask/qtask/tasks/statefs"
)

// seedPath is where the adopt leaves the screen (capture.Seed) for the
// capture of task id.
func (s *Store) seedPath(id string) string { return filepath.Join(s.tasksDir(), id+".seed") }

// writeSeed leaves the seed for the capture of task id.
func (s *Store) writeSeed(id string, seed capture.Seed) error {
	data, err := json.Marshal(seed)
	if err != nil {
		return fmt.Errorf("encode screen of task %s: %w", id, err)
	}
	return statefs.WriteAtomic(s.seedPath(id), data)
}

// takeSeed reads and removes the seed of task id; ok is false when there
// is none (nothing was on the screen that is the task's).
func (s *Store) takeSeed(id string) (seed capture.Seed, ok bool, err error) {
	path := s.seedPath(id)
	data, err := statefs.ReadOwn(path)
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

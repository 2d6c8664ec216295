package capture

import (
	"os"
	"strings"
	"syscall"

	"github.com/qtask/qtask/tasks/capped"
)

// The raw copy (tasks' keep_raw_output): the bytes the pane received,
// escapes and colours included, in a second capped file beside the output
// file, for `qtask logs --raw`. Without qtask's end marker and the
// program's questions to its terminal (rawFilter); best effort: a write
// that fails ends the copy with a line saying so.

// RawPath is the raw copy of the task whose output file is outputPath.
func RawPath(outputPath string) string {
	return strings.TrimSuffix(outputPath, ".log") + ".raw"
}

// rawCopy is the capture's writer of the raw copy; nil: none kept.
type rawCopy struct {
	out     *capped.File
	filter  rawFilter
	stopped bool
}

// openRawCopy creates f's raw copy, capped at limit bytes; nil if f keeps
// none or it cannot be made (logs --raw then says there is none).
func openRawCopy(f File, limit int64) *rawCopy {
	if !f.KeepRaw {
		return nil
	}
	path := RawPath(f.Path)
	fd, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil
	}
	fd.Close()
	out, err := capped.Open(path, limit)
	if err != nil {
		return nil
	}
	return &rawCopy{out: out, filter: newRawFilter(f.EndMarker)}
}

// write appends the pane's bytes p.
func (c *rawCopy) write(p []byte) {
	if c == nil || c.stopped {
		return
	}
	b := c.filter.pass(p)
	if len(b) == 0 {
		return
	}
	if _, err := c.out.Write(b); err != nil {
		c.stopped = true
		c.out.Write([]byte("\x1b[0m\r\n[qtask: the raw copy stops here: " + err.Error() + "]\r\n"))
	}
}

func (c *rawCopy) close() {
	if c != nil {
		c.out.Close()
	}
}

package route

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"time"
)

// QwenDefaultToolTimeout is qwen-code's (0.24.4) shell tool timeout for a
// foreground command when neither the call nor its settings give one:
// two minutes, which is also qtask's default foreground timeout.
const QwenDefaultToolTimeout = 2 * time.Minute

// QwenToolTimeout is the timeout of the qwen-code shell tool that runs a
// foreground `qtask run`, from what its environment says: session is
// $QWEN_CODE_SESSION_ID ("" when qwen is not the caller: 0), home the
// user's home, cwd the command's working directory (qwen runs commands in
// its project, or a directory of it). It is tools.shell.defaultTimeoutMs
// from qwen's settings, the project's (the nearest .qwen/settings.json at
// or above cwd) over the user's (in home), else two minutes; 0 when the
// settings turn it off (0).
//
// Past it qwen kills the command's process group, and a foreground qtask
// run killed so stops its task: at equal timeouts (both two minutes by
// default) qwen's fired first and the work was lost, where qtask would
// have moved it to the background (measured with qwen 0.24.4). The
// model's own `timeout` argument for one call is not seen here.
func QwenToolTimeout(session, home, cwd string) time.Duration {
	if session == "" {
		return 0
	}
	timeout := QwenDefaultToolTimeout
	if t, ok := qwenSettingsTimeout(home); ok && home != "" {
		timeout = t
	}
	for dir := cwd; filepath.IsAbs(dir); dir = filepath.Dir(dir) {
		if t, ok := qwenSettingsTimeout(dir); ok {
			return t
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return timeout
}

// qwenSettingsTimeout reads tools.shell.defaultTimeoutMs from the qwen
// settings file in dir (dir/.qwen/settings.json), as qwen reads it:
// comments allowed, any number of milliseconds ≥ 0 (one past what a
// Duration holds is as good as none: maxQwenTimeout). False when the file
// or the key is missing or not such a number.
func qwenSettingsTimeout(dir string) (time.Duration, bool) {
	data, err := os.ReadFile(filepath.Join(dir, ".qwen", "settings.json"))
	if err != nil {
		return 0, false
	}
	var s struct {
		Tools struct {
			Shell struct {
				DefaultTimeoutMs *float64 `json:"defaultTimeoutMs"`
			} `json:"shell"`
		} `json:"tools"`
	}
	if json.Unmarshal(withoutComments(data), &s) != nil || s.Tools.Shell.DefaultTimeoutMs == nil {
		return 0, false
	}
	ms := *s.Tools.Shell.DefaultTimeoutMs
	if ms < 0 || math.IsNaN(ms) {
		return 0, false
	}
	return time.Duration(min(ms, float64(maxQwenTimeout/time.Millisecond))) * time.Millisecond, true
}

// maxQwenTimeout bounds a timeout read from qwen's settings: longer is
// never reached, and a Duration of more milliseconds would overflow.
const maxQwenTimeout = 365 * 24 * time.Hour

// withoutComments is a JSON text with its // and /* */ comments blanked,
// strings kept as they are: qwen strips them before it parses its
// settings, so a commented file is one it reads.
func withoutComments(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			end := min(j+1, len(b))
			out = append(out, b[i:end]...)
			i = end - 1
		case bytes.HasPrefix(b[i:], []byte("//")):
			for i+1 < len(b) && b[i+1] != '\n' {
				i++
			}
		case bytes.HasPrefix(b[i:], []byte("/*")):
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += 2 + end + 1
			out = append(out, ' ')
		default:
			out = append(out, b[i])
		}
	}
	return out
}

package route

import (
	"encoding/json"
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
	if ms, ok := qwenSettingsTimeout(home); ok && home != "" {
		timeout = time.Duration(ms) * time.Millisecond
	}
	for dir := cwd; filepath.IsAbs(dir); dir = filepath.Dir(dir) {
		if ms, ok := qwenSettingsTimeout(dir); ok {
			return time.Duration(ms) * time.Millisecond
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return timeout
}

// qwenSettingsTimeout reads tools.shell.defaultTimeoutMs from the qwen
// settings file in dir (dir/.qwen/settings.json); false when the file or
// the key is missing or not what qwen accepts (a whole number ≥ 0).
func qwenSettingsTimeout(dir string) (int64, bool) {
	data, err := os.ReadFile(filepath.Join(dir, ".qwen", "settings.json"))
	if err != nil {
		return 0, false
	}
	var s struct {
		Tools struct {
			Shell struct {
				DefaultTimeoutMs *int64 `json:"defaultTimeoutMs"`
			} `json:"shell"`
		} `json:"tools"`
	}
	if json.Unmarshal(data, &s) != nil || s.Tools.Shell.DefaultTimeoutMs == nil || *s.Tools.Shell.DefaultTimeoutMs < 0 {
		return 0, false
	}
	return *s.Tools.Shell.DefaultTimeoutMs, true
}

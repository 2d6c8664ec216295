package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

const validKeyList = "shell, session, stop_grace, output_max_bytes, foreground_timeout, on_timeout, long_run_note, keep_promoted_pane, keep_full_screen, keep_failed_pane, keep_raw_output, keep_finished, status_format, agent_windows, wake"

// writeConfig writes content to a fresh config file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefaultShell(t *testing.T) {
	withBash := t.TempDir()
	if err := os.WriteFile(filepath.Join(withBash, "bash"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{"bash on PATH", withBash, "bash"},
		{"no bash on PATH", t.TempDir(), "sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			if got := Default().Shell; got != tt.want {
				t.Errorf("Default().Shell = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	got := Default()
	want := Config{
		Shell:             got.Shell, // PATH-dependent; see TestDefaultShell
		Session:           "qtask",
		StopGrace:         2 * time.Second,
		OutputMaxBytes:    32 * 1024 * 1024,
		ForegroundTimeout: 2 * time.Minute,
		OnTimeout:         "background",
		LongRunNote:       "agent",
		KeepPromotedPane:  false,
		KeepFinished:      200,
		StatusFormat:      "⏵{running} ✗{failed}",
		AgentWindows:      "qtask",
		Wake:              "none",
	}
	if got != want {
		t.Errorf("Default() = %+v, want %+v", got, want)
	}
}

func TestLoadNoFile(t *testing.T) {
	tests := []struct {
		name string
		path string
	}{
		{"missing file", filepath.Join(t.TempDir(), "config.toml")},
		{"missing directory", filepath.Join(t.TempDir(), "qtask", "config.toml")},
		{"empty path", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, exists, err := Load(tt.path)
			if err != nil || exists || cfg != Default() {
				t.Errorf("Load(%q) = %+v, %v, %v; want defaults, false, nil", tt.path, cfg, exists, err)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir() // a directory cannot be read as a file
	_, exists, err := Load(dir)
	var cfgErr *Error
	if err == nil || exists || errors.As(err, &cfgErr) {
		t.Fatalf("Load(directory) = exists %v, err %v; want exists false and a plain I/O error", exists, err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name the path %q", err, dir)
	}
}

// TestLoadRefusesWhatIsNotAFile: a FIFO named as the config once blocked
// every qtask command forever in open(2), deaf to Ctrl+C.
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "config.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := Load(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("Load(FIFO) = %v, want an error naming %s as a named pipe", err, fifo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load(FIFO) blocked: a FIFO as QTASK_CONFIG hangs every command")
	}
	if cfg, _, err := Load(os.DevNull); err != nil || cfg != Default() {
		t.Errorf("Load(%s) = %+v, %v; want the defaults: /dev/null is the usual empty config", os.DevNull, cfg, err)
	}
}

func TestLoadValid(t *testing.T) {
	tests := []struct {
		name    string
		content string
		change  func(*Config) // applied to Default() to get the expected Config
	}{
		{"empty file", "", func(*Config) {}},
		{"comments and blank lines", "# nothing set\n\n   # still nothing\n", func(*Config) {}},
		{"shell", `shell = "/bin/zsh"`, func(c *Config) { c.Shell = "/bin/zsh" }},
		{"session", `session = "work-tasks_2"`, func(c *Config) { c.Session = "work-tasks_2" }},
		{"stop_grace", `stop_grace = "500ms"`, func(c *Config) { c.StopGrace = 500 * time.Millisecond }},
		{"stop_grace zero string", `stop_grace = "0s"`, func(c *Config) { c.StopGrace = 0 }},
		{"stop_grace zero integer", `stop_grace = 0`, func(c *Config) { c.StopGrace = 0 }},
		{"stop_grace maximum", `stop_grace = "1h"`, func(c *Config) { c.StopGrace = time.Hour }},
		{"output_max_bytes integer", `output_max_bytes = 65536`, func(c *Config) { c.OutputMaxBytes = 65536 }},
		{"output_max_bytes underscores", `output_max_bytes = 1_000_000`, func(c *Config) { c.OutputMaxBytes = 1000000 }},
		{"output_max_bytes KiB", `output_max_bytes = "512KiB"`, func(c *Config) { c.OutputMaxBytes = 512 << 10 }},
		{"output_max_bytes MiB", `output_max_bytes = "32MiB"`, func(c *Config) { c.OutputMaxBytes = 32 << 20 }},
		{"output_max_bytes GiB", `output_max_bytes = "1GiB"`, func(c *Config) { c.OutputMaxBytes = 1 << 30 }},
		{"foreground_timeout", `foreground_timeout = "1m30s"`, func(c *Config) { c.ForegroundTimeout = 90 * time.Second }},
		{"foreground_timeout disabled", `foreground_timeout = "0"`, func(c *Config) { c.ForegroundTimeout = 0 }},
		{"foreground_timeout long", `foreground_timeout = "24h"`, func(c *Config) { c.ForegroundTimeout = 24 * time.Hour }},
		{"foreground_timeout in days", `foreground_timeout = "2d"`, func(c *Config) { c.ForegroundTimeout = 48 * time.Hour }},
		{"on_timeout background", `on_timeout = "background"`, func(*Config) {}},
		{"on_timeout kill", `on_timeout = "kill"`, func(c *Config) { c.OnTimeout = OnTimeoutKill }},
		{"long_run_note always", `long_run_note = "always"`, func(c *Config) { c.LongRunNote = LongRunNoteAlways }},
		{"long_run_note off", `long_run_note = "off"`, func(c *Config) { c.LongRunNote = LongRunNoteOff }},
		{"long_run_note agent", `long_run_note = "agent"`, func(*Config) {}},
		{"keep_promoted_pane", `keep_promoted_pane = true`, func(c *Config) { c.KeepPromotedPane = true }},
		{"keep_full_screen", `keep_full_screen = true`, func(c *Config) { c.KeepFullScreen = true }},
		{"keep_failed_pane", `keep_failed_pane = true`, func(c *Config) { c.KeepFailedPane = true }},
		{"keep_raw_output", `keep_raw_output = true`, func(c *Config) { c.KeepRawOutput = true }},
		{"keep_finished", `keep_finished = 50`, func(c *Config) { c.KeepFinished = 50 }},
		{"keep_finished zero keeps all", `keep_finished = 0`, func(c *Config) { c.KeepFinished = 0 }},
		{"status_format", `status_format = "#[fg=red]{failed} failed"`, func(c *Config) { c.StatusFormat = "#[fg=red]{failed} failed" }},
		{"agent_windows current", `agent_windows = "current"`, func(c *Config) { c.AgentWindows = AgentWindowsCurrent }},
		{"agent_windows qtask", `agent_windows = "qtask"`, func(*Config) {}},
		{"wake tmux", `wake = "tmux"`, func(c *Config) { c.Wake = WakeTmux }},
		{"wake none", `wake = "none"`, func(*Config) {}},
		{"literal string", `shell = 'C:\bin\sh'`, func(c *Config) { c.Shell = `C:\bin\sh` }},
		{"quoted key", `"shell" = "dash"`, func(c *Config) { c.Shell = "dash" }},
		{"byte order mark", "\ufeffsession = \"bom\"", func(c *Config) { c.Session = "bom" }},
		{"CRLF line endings", "session = \"a\"\r\nstop_grace = \"3s\"\r\n", func(c *Config) {
			c.Session = "a"
			c.StopGrace = 3 * time.Second
		}},
		{"all keys", strings.Join([]string{
			`shell = "sh"`,
			`session = "s"`,
			`stop_grace = "10s"`,
			`output_max_bytes = "1MiB"`,
			`foreground_timeout = "5m"`,
			`on_timeout = "kill"`,
			`long_run_note = "off"`,
			`keep_promoted_pane = true`,
			`keep_full_screen = true`,
			`keep_failed_pane = true`,
			`keep_raw_output = true`,
			`keep_finished = 7`,
			`status_format = "{running} running"`,
			`agent_windows = "current"`,
			`wake = "tmux"`,
		}, "\n"), func(c *Config) {
			*c = Config{
				Shell:             "sh",
				Session:           "s",
				StopGrace:         10 * time.Second,
				OutputMaxBytes:    1 << 20,
				ForegroundTimeout: 5 * time.Minute,
				OnTimeout:         OnTimeoutKill,
				LongRunNote:       LongRunNoteOff,
				KeepPromotedPane:  true,
				KeepFullScreen:    true,
				KeepFailedPane:    true,
				KeepRawOutput:     true,
				KeepFinished:      7,
				StatusFormat:      "{running} running",
				AgentWindows:      AgentWindowsCurrent,
				Wake:              WakeTmux,
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := Default()
			tt.change(&want)
			got, exists, err := Load(writeConfig(t, tt.content))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !exists {
				t.Error("exists = false for a file that exists")
			}
			if got != want {
				t.Errorf("Load = %+v\nwant   %+v", got, want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		line, col int
		key       string
		msg       string
	}{
		// Unknown keys and tables.
		{"unknown key", "shell = \"sh\"\n\nshel = \"bash\"\n", 3, 1, "shel",
			`unknown key "shel" (valid keys: ` + validKeyList + `)`},
		{"unknown quoted key", `"my key" = 1`, 1, 1, "my key",
			`unknown key "my key" (valid keys: ` + validKeyList + `)`},
		{"unknown dotted key", "  extra.thing = 1", 1, 3, "extra",
			`unknown key "extra" (valid keys: ` + validKeyList + `)`},
		{"section header", "session = \"s\"\n[tmux]\nsocket = \"x\"\n", 2, 2, "tmux",
			`unknown key "tmux" (valid keys: ` + validKeyList + `)`},
		{"dotted section header", "[a.b]\n", 1, 2, "a",
			`unknown key "a" (valid keys: ` + validKeyList + `)`},
		{"array of tables", "[[task]]\n", 1, 3, "task",
			`unknown key "task" (valid keys: ` + validKeyList + `)`},
		{"valid key inside section", "[extra]\nshell = \"sh\"\n", 1, 2, "extra",
			`unknown key "extra" (valid keys: ` + validKeyList + `)`},
		{"first problem wins", "bogus = 1\nstop_grace = 5\n", 1, 1, "bogus",
			`unknown key "bogus" (valid keys: ` + validKeyList + `)`},

		// shell
		{"shell integer", `shell = 5`, 1, 9, "shell",
			`key "shell": want a program name or path such as "bash", got integer 5`},
		{"shell empty", `shell = "  "`, 1, 9, "shell",
			`key "shell": must not be empty; want a program name or path such as "bash"`},
		{"shell table header", "[shell]\n", 1, 2, "shell",
			`key "shell": want a program name or path such as "bash", got a table`},
		{"shell dotted", "shell.path = \"sh\"\n", 1, 1, "shell",
			`key "shell": want a program name or path such as "bash", got a table`},
		{"shell array of tables", "[[shell]]\n", 1, 3, "shell",
			`key "shell": want a program name or path such as "bash", got an array of tables`},
		{"shell inline table", "shell = { path = \"sh\" }", 1, 9, "shell",
			`key "shell": want a program name or path such as "bash", got a table`},

		// session
		{"session empty", `session = ""`, 1, 11, "session",
			`key "session": must not be empty; want a tmux session name such as "qtask"`},
		{"session colon", `session = "a:b"`, 1, 11, "session",
			`key "session": "a:b" contains ':', which tmux target names cannot hold; use a name without ':', '.', whitespace or control characters`},
		{"session dot", `session = "a.b"`, 1, 11, "session",
			`key "session": "a.b" contains '.', which tmux target names cannot hold; use a name without ':', '.', whitespace or control characters`},
		{"session space", `session = "my tasks"`, 1, 11, "session",
			`key "session": "my tasks" contains ' ', which tmux target names cannot hold; use a name without ':', '.', whitespace or control characters`},
		{"session control", `session = "a\u0007"`, 1, 11, "session",
			`key "session": "a\a" contains '\a', which tmux target names cannot hold; use a name without ':', '.', whitespace or control characters`},
		{"session boolean", `session = true`, 1, 11, "session",
			`key "session": want a tmux session name such as "qtask", got boolean true`},

		// stop_grace
		{"stop_grace integer", "# grace\nstop_grace = 5\n", 2, 14, "stop_grace",
			`key "stop_grace": want a duration such as "30s", "5m", "1h30m" or "7d", got integer 5`},
		{"stop_grace no unit", `stop_grace = "5"`, 1, 14, "stop_grace",
			`key "stop_grace": "5" is not a duration such as "30s", "5m", "1h30m" or "7d"`},
		{"stop_grace words", `stop_grace =   "2 seconds"`, 1, 16, "stop_grace",
			`key "stop_grace": "2 seconds" is not a duration such as "30s", "5m", "1h30m" or "7d"`},
		{"stop_grace negative", `stop_grace = "-1s"`, 1, 14, "stop_grace",
			`key "stop_grace": "-1s" is negative; want 0 or more`},
		{"stop_grace too long", `stop_grace = "61m"`, 1, 14, "stop_grace",
			`key "stop_grace": "61m" is more than the maximum of 1h`},
		{"stop_grace float", `stop_grace = 1.5`, 1, 14, "stop_grace",
			`key "stop_grace": want a duration such as "30s", "5m", "1h30m" or "7d", got float 1.5`},

		// output_max_bytes
		{"output_max_bytes too small", `output_max_bytes = 65535`, 1, 20, "output_max_bytes",
			`key "output_max_bytes": 65535 is less than the minimum of 64KiB (65536 bytes)`},
		{"output_max_bytes negative", `output_max_bytes = -1`, 1, 20, "output_max_bytes",
			`key "output_max_bytes": -1 is less than the minimum of 64KiB (65536 bytes)`},
		{"output_max_bytes small string", `output_max_bytes = "63KiB"`, 1, 20, "output_max_bytes",
			`key "output_max_bytes": "63KiB" is less than the minimum of 64KiB (65536 bytes)`},
		{"output_max_bytes decimal unit", `output_max_bytes = "10MB"`, 1, 20, "output_max_bytes",
			`key "output_max_bytes": "10MB" is not a size; want an integer number of bytes or a string such as "512KiB", "32MiB" or "1GiB"`},
		{"output_max_bytes overflow", `output_max_bytes = "9999999999GiB"`, 1, 20, "output_max_bytes",
			`key "output_max_bytes": "9999999999GiB" is too large; want an integer number of bytes or a string such as "512KiB", "32MiB" or "1GiB"`},
		{"output_max_bytes float", `output_max_bytes = 1e6`, 1, 20, "output_max_bytes",
			`key "output_max_bytes": want an integer number of bytes or a string such as "512KiB", "32MiB" or "1GiB", got float 1e+06`},
		{"output_max_bytes array", `output_max_bytes = [1]`, 1, 20, "output_max_bytes",
			`key "output_max_bytes": want an integer number of bytes or a string such as "512KiB", "32MiB" or "1GiB", got an array`},

		// foreground_timeout
		{"foreground_timeout negative", `foreground_timeout = "-2m"`, 1, 22, "foreground_timeout",
			`key "foreground_timeout": "-2m" is negative; want 0 or more`},
		{"foreground_timeout integer", `foreground_timeout = 120`, 1, 22, "foreground_timeout",
			`key "foreground_timeout": want a duration such as "30s", "5m", "1h30m" or "7d", got integer 120`},
		{"foreground_timeout datetime", `foreground_timeout = 1979-05-27`, 1, 22, "foreground_timeout",
			`key "foreground_timeout": want a duration such as "30s", "5m", "1h30m" or "7d", got a datetime`},

		// on_timeout
		{"on_timeout unknown", "\n\n\non_timeout = \"sometimes\"", 4, 14, "on_timeout",
			`key "on_timeout": "sometimes" is not one of background, kill`},
		{"on_timeout case", `on_timeout = "Kill"`, 1, 14, "on_timeout",
			`key "on_timeout": "Kill" is not one of background, kill`},
		{"on_timeout boolean", `on_timeout = false`, 1, 14, "on_timeout",
			`key "on_timeout": want "background" or "kill", got boolean false`},

		// keep_promoted_pane
		{"keep_promoted_pane string", `keep_promoted_pane = "yes"`, 1, 22, "keep_promoted_pane",
			`key "keep_promoted_pane": want true or false, got string "yes"`},
		{"keep_promoted_pane integer", `keep_promoted_pane = 1`, 1, 22, "keep_promoted_pane",
			`key "keep_promoted_pane": want true or false, got integer 1`},
		{"keep_full_screen string", `keep_full_screen = "on"`, 1, 20, "keep_full_screen",
			`key "keep_full_screen": want true or false, got string "on"`},

		{"status_format unknown placeholder", `status_format = "{done} done"`, 1, 17, "status_format",
			`key "status_format": unknown placeholder {done}; want {running} or {failed}`},
		{"status_format control", `status_format = "a\tb"`, 1, 17, "status_format",
			`key "status_format": must not contain control characters (tabs, newlines, escapes)`},
		// keep_finished
		{"keep_finished negative", `keep_finished = -1`, 1, 17, "keep_finished",
			`key "keep_finished": -1 is out of range; want 0 (keep every task) to 2147483647`},
		{"keep_finished string", `keep_finished = "200"`, 1, 17, "keep_finished",
			`key "keep_finished": want a number of tasks such as 200 (0 keeps every task), got string "200"`},

		// agent_windows
		{"agent_windows unknown", `agent_windows = "mine"`, 1, 17, "agent_windows",
			`key "agent_windows": "mine" is not one of qtask, current`},
		{"agent_windows boolean", `agent_windows = true`, 1, 17, "agent_windows",
			`key "agent_windows": want "qtask" or "current", got boolean true`},
		{"wake unknown", `wake = "screen"`, 1, 8, "wake",
			`key "wake": "screen" is not one of none, tmux`},
		// long_run_note
		{"long_run_note unknown", "shell = \"sh\"\n  long_run_note = \"never\"", 2, 19, "long_run_note",
			`key "long_run_note": "never" is not one of agent, always, off`},
		{"long_run_note boolean", `long_run_note = false`, 1, 17, "long_run_note",
			`key "long_run_note": want "agent", "always" or "off", got boolean false`},

		// Positions must survive values spanning lines and non-ASCII text.
		{"after multi-line string", "shell = \"\"\"\nsession = 1\n\"\"\"\nstop_grace = 5\n", 4, 14, "stop_grace",
			`key "stop_grace": want a duration such as "30s", "5m", "1h30m" or "7d", got integer 5`},
		{"after brackets in multi-line string", "shell = \"\"\"\n[x]\ny = [\n\"\"\"\nsession = 1\n", 5, 11, "session",
			`key "session": want a tmux session name such as "qtask", got integer 1`},
		{"after multi-line literal", "shell = '''\nab'''\nstop_grace = 'x'\n", 3, 14, "stop_grace",
			`key "stop_grace": "x" is not a duration such as "30s", "5m", "1h30m" or "7d"`},
		{"tab indent", "\tsession = 1", 1, 12, "session",
			`key "session": want a tmux session name such as "qtask", got integer 1`},
		{"byte order mark", "\ufeffsession = 1", 1, 11, "session",
			`key "session": want a tmux session name such as "qtask", got integer 1`},
		// The library points at the blank before the unexpected token.
		{"multibyte column", `shell = "é" ; session = 1`, 1, 12, "",
			`invalid TOML: expected a top-level item to end with a newline, comment, or EOF, but got ';' instead`},

		// Syntax errors.
		{"unquoted string", "\nshell = bash\n", 2, 9, "",
			`invalid TOML: expected value but found "bash" instead; put strings in quotes, as in shell = "bash"`},
		{"unterminated string", "shell = \"bash\n", 1, 14, "",
			`invalid TOML: strings cannot contain newlines`},
		{"unterminated string at end of file", `shell = "bash`, 1, 13, "",
			`invalid TOML: unexpected EOF; expected '"'`},
		{"unterminated table header", "[a\n", 1, 3, "",
			`invalid TOML: expected '.' or ']' to end table name, but got '\n' instead`},
		{"duplicate key", "shell = \"a\"\nshell = \"b\"\n", 2, 1, "",
			`invalid TOML: Key 'shell' has already been defined.`},
		{"bad escape", `shell = "\q"`, 1, 10, "",
			`invalid TOML: invalid escape in string '\q'`},
		{"blank key", `= 1`, 1, 1, "",
			`invalid TOML: unexpected '=': key name appears blank`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.content)
			cfg, exists, err := Load(path)
			if err == nil {
				t.Fatalf("Load succeeded with %+v; want an error", cfg)
			}
			if !exists {
				t.Error("exists = false for a file that exists")
			}
			if cfg != (Config{}) {
				t.Errorf("Config on error = %+v, want zero", cfg)
			}
			var cfgErr *Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("error %v (%T) is not a *Error", err, err)
			}
			want := Error{Path: path, Line: tt.line, Col: tt.col, Key: tt.key, Msg: tt.msg}
			got := *cfgErr
			got.err = nil
			if got != want {
				t.Errorf("error = %#v\nwant    %#v", got, want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestSyntaxErrorUnwraps(t *testing.T) {
	_, _, err := Load(writeConfig(t, "shell = bash"))
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("errors.As(%v, *toml.ParseError) = false", err)
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Path: "/c.toml", Line: 3, Col: 1, Key: "shel", Msg: "m"}, "/c.toml:3:1: m"},
		{Error{Path: "/c.toml", Line: 3, Msg: "m"}, "/c.toml:3: m"},
		{Error{Path: "/c.toml", Col: 4, Msg: "m"}, "/c.toml: m"},
		{Error{Path: "/c.toml", Msg: "m"}, "/c.toml: m"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestParseDuration: Go's syntax, plus whole days, which Go lacks and
// `prune --older-than 7d` always took: every flag and key takes the same.
func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90m", 90 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true},
		{"500ms", 500 * time.Millisecond, true},
		{"0", 0, true},
		{"-1s", -time.Second, true},
		{"1d", 24 * time.Hour, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"0d", 0, true},
		{"-1d", -24 * time.Hour, true},
		{"100000d", 100_000 * 24 * time.Hour, true},
		{"100001d", 0, false},
		{"1.5d", 0, false},
		{"d", 0, false},
		{"1d12h", 0, false},
		{"week", 0, false},
		{"5", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "such as 30s, 90m, 12h or 7d") {
			t.Errorf("ParseDuration(%q): %v, want it to show the syntax", tt.in, err)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		problem string
	}{
		{"65536", 65536, ""},
		{"0", 0, ""},
		{"1KiB", 1024, ""},
		{"512KiB", 512 << 10, ""},
		{"32MiB", 32 << 20, ""},
		{"1GiB", 1 << 30, ""},
		{"8589934591GiB", 8589934591 << 30, ""},
		{"32mib", 32 << 20, ""},
		{" 32 MiB ", 32 << 20, ""},
		{"8589934592GiB", 0, "is too large"},
		{"99999999999999999999", 0, "is too large"},
		{"", 0, "is not a size"},
		{"MiB", 0, "is not a size"},
		{"10MB", 0, "is not a size"},
		{"10M", 0, "is not a size"},
		{"1.5GiB", 0, "is not a size"},
		{"-1KiB", 0, "is not a size"},
		{"+1KiB", 0, "is not a size"},
		{"1_000", 0, "is not a size"},
	}
	for _, tt := range tests {
		got, problem := parseSize(tt.in)
		if got != tt.want || problem != tt.problem {
			t.Errorf("parseSize(%q) = %d, %q; want %d, %q", tt.in, got, problem, tt.want, tt.problem)
		}
	}
}

func TestEncodeDefault(t *testing.T) {
	cfg := Default()
	cfg.Shell = "bash" // independent of PATH
	var buf bytes.Buffer
	if err := cfg.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	want := `shell = "bash"
session = "qtask"
stop_grace = "2s"
output_max_bytes = 33554432
foreground_timeout = "2m"
on_timeout = "background"
long_run_note = "agent"
keep_promoted_pane = false
keep_full_screen = false
keep_failed_pane = false
keep_raw_output = false
keep_finished = 200
status_format = "⏵{running} ✗{failed}"
agent_windows = "qtask"
wake = "none"
`
	if buf.String() != want {
		t.Errorf("Encode wrote\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"default", Default()},
		{"everything changed", Config{
			Shell:             `/opt/my "shell"\bin/sh`,
			Session:           "tasks-é",
			StopGrace:         time.Hour,
			OutputMaxBytes:    64 << 10,
			ForegroundTimeout: 0,
			OnTimeout:         OnTimeoutKill,
			LongRunNote:       LongRunNoteAlways,
			KeepPromotedPane:  true,
			AgentWindows:      AgentWindowsCurrent,
			Wake:              WakeTmux,
		}},
		{"odd durations", Config{
			Shell:             "sh",
			Session:           "q",
			StopGrace:         1500 * time.Millisecond,
			OutputMaxBytes:    1<<62 + 7,
			ForegroundTimeout: 25*time.Hour + 90*time.Second + time.Nanosecond,
			OnTimeout:         OnTimeoutBackground,
			LongRunNote:       LongRunNoteOff,
			AgentWindows:      AgentWindowsQtask,
			Wake:              WakeNone,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.cfg.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			got, exists, err := Load(writeConfig(t, buf.String()))
			if err != nil || !exists {
				t.Fatalf("Load(encoded) = exists %v, err %v\nencoded:\n%s", exists, err, buf.String())
			}
			if got != tt.cfg {
				t.Errorf("round trip = %+v\nwant        %+v\nencoded:\n%s", got, tt.cfg, buf.String())
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{2 * time.Second, "2s"},
		{1500 * time.Millisecond, "1.5s"},
		{2 * time.Minute, "2m"},
		{90 * time.Second, "1m30s"},
		{time.Hour, "1h"},
		{time.Hour + time.Minute, "1h1m"},
		{time.Hour + time.Second, "1h0m1s"},
		{10 * time.Minute, "10m"},
	}
	for _, tt := range tests {
		got := formatDuration(tt.in)
		if got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
		if back, err := time.ParseDuration(got); err != nil || back != tt.in {
			t.Errorf("time.ParseDuration(%q) = %v, %v; want %v", got, back, err, tt.in)
		}
	}
}

func TestLocateKeys(t *testing.T) {
	text := strings.Join([]string{
		`a = 1`,                 // 1
		`  b.c = "x" # d = 2`,   // 2
		`e = """`,               // 3
		`f = 3`,                 // 4
		`"""`,                   // 5
		`'g h' = [ "[", '''`,    // 6
		`i = ]''',`,             // 7
		`]`,                     // 8
		`[t . "u"]`,             // 9
		`j = 'k' # [l]`,         // 10
		`"é" = "é"`,             // 11
		`[[arr]]`,               // 12
		`m = "\"" # n = [`,      // 13
		`o = 1`,                 // 14
		`p = """a\"""" # q = 1`, // 15
		`r = 1`,                 // 16
		`s = """\"""`,           // 17
		`t = 1 """`,             // 18
		`u = 1`,                 // 19
	}, "\n")
	if _, err := toml.Decode(text, new(map[string]any)); err != nil {
		t.Fatalf("test input is not valid TOML: %v", err)
	}
	want := map[string]keyPos{
		"a":       {1, 1, 5},
		"b":       {2, 3, 3},
		"b.c":     {2, 3, 9},
		"e":       {3, 1, 5},
		`"g h"`:   {6, 1, 9},
		"t":       {9, 2, 2},
		"t.u":     {9, 2, 2},
		"t.u.j":   {10, 1, 5},
		`t.u."é"`: {11, 1, 7},
		"arr":     {12, 3, 3},
		"arr.m":   {13, 1, 5},
		"arr.o":   {14, 1, 5},
		"arr.p":   {15, 1, 5},
		"arr.r":   {16, 1, 5},
		"arr.s":   {17, 1, 5},
		"arr.u":   {19, 1, 5},
	}
	got := locateKeys(text)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("position of %s = %+v, want %+v", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected key %s at %+v", k, got[k])
		}
	}
}

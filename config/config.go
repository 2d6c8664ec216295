// Package config owns qtask's two sources of outside settings: the optional
// TOML config file (Config, Load) and the process environment (Env,
// EnvFrom). Nothing else in qtask reads either directly, so defaults,
// validation and precedence are decided here once.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/qtask/qtask/tasks/capped"
)

// Config is the effective configuration. Every field has a default (see
// Default), so a Config returned by Default or Load is always complete and
// valid; callers never need to check for zero values.
type Config struct {
	// Shell is the program that runs task commands as `Shell -c command`.
	// TOML key "shell". Default "bash" if bash is on PATH, else "sh".
	// Never empty.
	Shell string
	// Session is the tmux session that holds background tasks. TOML key
	// "session". Default "qtask". Never empty and never contains ':', '.',
	// whitespace or control characters, so it is safe in a tmux target.
	Session string
	// StopGrace is how long `qtask stop` waits after SIGTERM before sending
	// SIGKILL. TOML key "stop_grace", a duration string such as "2s".
	// Default 2s; always between 0 and 1h inclusive.
	StopGrace time.Duration
	// OutputMaxBytes caps the captured output kept per task. TOML key
	// "output_max_bytes", an integer number of bytes or a string with a
	// KiB, MiB or GiB suffix such as "32MiB". Default 32 MiB; always at
	// least 64 KiB.
	OutputMaxBytes int64
	// ForegroundTimeout is how long a foreground task may run before
	// OnTimeout applies. TOML key "foreground_timeout", a duration string.
	// Default 2m; 0 disables the timeout. Never negative.
	ForegroundTimeout time.Duration
	// OnTimeout says what happens when ForegroundTimeout expires. TOML key
	// "on_timeout". Default OnTimeoutBackground; always OnTimeoutBackground
	// or OnTimeoutKill.
	OnTimeout string
	// LongRunNote says who is told, after a foreground `qtask run` that
	// ran long (at least max(1s, timeout/2)) and ended by itself, that
	// such commands are better started in the background. TOML key
	// "long_run_note". Default LongRunNoteAgent; always one of
	// LongRunNoteAgent, LongRunNoteAlways or LongRunNoteOff.
	LongRunNote string
	// KeepPromotedPane says whether an interactive pane promoted to the
	// background stays open after its command ends, so its final output
	// can still be inspected in tmux. TOML key "keep_promoted_pane".
	// Default false.
	KeepPromotedPane bool
	// KeepFullScreen says whether a full-screen program's last screen
	// (vim, less, htop: the alternate screen) is kept in the output file
	// after the note that stands for its output. TOML key
	// "keep_full_screen". Default false.
	KeepFullScreen bool
	// KeepFailedPane says whether the pane of a task that failed stays
	// open, dead, with its colours and scrollback, for a person to look
	// at: it closes once they have looked and left it (qtask attach, the
	// menu), or when the task is removed (qtask rm, pruning). TOML key
	// "keep_failed_pane". Default false.
	KeepFailedPane bool
	// KeepRawOutput says whether the capture also keeps the bytes the
	// pane received, escapes included, for `qtask logs --raw`: a second
	// file per task, capped at OutputMaxBytes. TOML key
	// "keep_raw_output". Default false.
	KeepRawOutput bool
	// KeepFinished is how many finished tasks (the newest, with their
	// output files) qtask keeps; older ones are pruned when a task starts.
	// TOML key "keep_finished", an integer. Default 200; 0 keeps every
	// task. Never negative. Running tasks are never pruned.
	KeepFinished int
	// StatusFormat is the tmux status segment qtask keeps in the user
	// option @qtask_status and prints with `qtask status-line`. TOML key
	// "status_format". {running} is the number of running tasks, {failed}
	// the failed background tasks nobody has looked at; each
	// space-separated part is shown only when a count it names is not
	// zero, so it is empty when idle. Default "⏵{running} ✗{failed}".
	// Only those two placeholders, no control characters.
	StatusFormat string
	// AgentWindows says where the window of a foreground command run in
	// agent mode opens. TOML key "agent_windows". Default
	// AgentWindowsQtask; always AgentWindowsQtask or AgentWindowsCurrent.
	AgentWindows string
	// Wake is how `qtask agent install` sets an agent's hooks up to wake it
	// when it sits idle, besides what the agent's own hooks can do: WakeTmux
	// (type one line into its tmux pane; --wake tmux) or WakeNone. TOML key
	// "wake". Default WakeNone. The --wake flag overrides it.
	Wake string
}

// StatusPlaceholders are the counts a status_format can name.
var StatusPlaceholders = []string{"{running}", "{failed}"}

// The values Config.OnTimeout can take.
const (
	// OnTimeoutBackground moves a timed-out foreground task to the
	// background, where it keeps running.
	OnTimeoutBackground = "background"
	// OnTimeoutKill stops a timed-out foreground task.
	OnTimeoutKill = "kill"
)

// The values Config.LongRunNote can take.
const (
	// LongRunNoteAgent: only an agent (agent mode) is told; it does not
	// learn otherwise, while a person saw the wait.
	LongRunNoteAgent = "agent"
	// LongRunNoteAlways: a person gets one short line too.
	LongRunNoteAlways = "always"
	// LongRunNoteOff: nobody is told.
	LongRunNoteOff = "off"
)

// The values Config.AgentWindows can take.
const (
	// AgentWindowsQtask opens an agent's foreground windows in the
	// background session, so that its many quick commands do not flicker
	// in the window list of the session the agent runs in.
	AgentWindowsQtask = "qtask"
	// AgentWindowsCurrent opens them beside the caller, as for a person.
	AgentWindowsCurrent = "current"
)

// The values Config.Wake can take.
const (
	WakeNone = "none"
	WakeTmux = "tmux"
)

// Limits enforced on the config file.
const (
	maxStopGrace      = time.Hour
	minOutputMaxBytes = 64 << 10
)

// Default returns the configuration used for every key the config file
// does not set. Shell is resolved against the current PATH on each call.
func Default() Config {
	cfg := builtin()
	cfg.Shell = defaultShell()
	return cfg
}

// defaultShell is the shell when the config names none: bash if it is on
// PATH, else sh.
func defaultShell() string {
	if _, err := exec.LookPath("bash"); err == nil {
		return "bash"
	}
	return "sh"
}

// builtin is Default without its shell, which costs a PATH search that
// a config naming its shell should not pay: every `qtask run` loads the
// config on its way to tmux.
func builtin() Config {
	return Config{
		Session:           "qtask",
		StopGrace:         2 * time.Second,
		OutputMaxBytes:    capped.DefaultMaxBytes,
		ForegroundTimeout: 2 * time.Minute,
		OnTimeout:         OnTimeoutBackground,
		LongRunNote:       LongRunNoteAgent,
		KeepPromotedPane:  false,
		KeepFinished:      200,
		StatusFormat:      "⏵{running} ✗{failed}",
		AgentWindows:      AgentWindowsQtask,
		Wake:              WakeNone,
	}
}

// Error is a problem with the contents of a config file. Its Error method
// renders one line, "path:line:col: msg", so it can be shown to the user
// as is; Line and Col are omitted from the text when unknown (zero).
type Error struct {
	// Path is the config file's path as given to Load.
	Path string
	// Line and Col locate the problem, both starting at 1; Col counts
	// characters (not bytes). Zero means unknown.
	Line, Col int
	// Key is the offending top-level key; empty for TOML syntax errors.
	Key string
	// Msg is the complete description of what is wrong and how to fix it.
	// It already names Key, so callers should not prepend it again.
	Msg string

	err error // underlying error, if any, for errors.Is and errors.As
}

// Error returns the one-line "path:line:col: msg" form.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the error that caused e, such as a toml.ParseError for a
// syntax error, or nil.
func (e *Error) Unwrap() error { return e.err }

// Load reads the config file at path and returns it merged over Default.
//
// exists reports whether a file was read. A missing file (or an empty
// path) is not an error: Load returns Default(), false, nil. Any problem
// with the file's contents is returned as a *Error that names the file,
// position and key; failing to read an existing file returns the wrapped
// I/O error. On error the returned Config is the zero value and must not
// be used.
func Load(path string) (cfg Config, exists bool, err error) {
	if path == "" {
		return Default(), false, nil
	}
	data, err := readRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), false, nil
	}
	if err != nil {
		return Config{}, false, fmt.Errorf("read config file: %w", err)
	}
	cfg, err = parse(path, string(data))
	if err != nil {
		return Config{}, true, err
	}
	return cfg, true, nil
}

// readRegular reads a config file without ever blocking on something that
// is not one: opening a FIFO for reading waits for a writer, forever, and a
// device may never end. The open does not block, and anything but a regular
// file is refused, except /dev/null, the usual way to say "no config".
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s is %s, not a regular file: point QTASK_CONFIG at a TOML file", path, fileKind(fi.Mode()))
	}
	return io.ReadAll(f)
}

// fileKind names what a non-regular file is, for the error.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// Encode writes every setting of c, defaults included, as TOML that Load
// reads back to an identical Config: durations as strings such as "2s" or
// "1m30s", sizes as integer byte counts. The keys appear in the order they
// are documented on Config. A Config that did not come from Default or
// Load is written as is, even if Load would reject its values.
func (c Config) Encode(w io.Writer) error {
	enc := toml.NewEncoder(w)
	for _, s := range settings {
		if err := enc.Encode(map[string]any{s.name: s.encode(c)}); err != nil {
			return fmt.Errorf("encode config key %q: %w", s.name, err)
		}
	}
	return nil
}

// setting describes one top-level config key.
type setting struct {
	name string
	// decode validates the file's value v and stores it in c. It returns
	// "" on success, else what is wrong and how to fix it, without the
	// key name.
	decode func(c *Config, v any) string
	// encode returns the TOML value Encode writes for c.
	encode func(c Config) any
}

// settings lists every valid key in documentation order.
var settings = []setting{
	{
		name: "shell",
		decode: func(c *Config, v any) string {
			return decodeString(&c.Shell, v, `a program name or path such as "bash"`, func(s string) string {
				if strings.TrimSpace(s) == "" {
					return `must not be empty; want a program name or path such as "bash"`
				}
				return ""
			})
		},
		encode: func(c Config) any { return c.Shell },
	},
	{
		name: "session",
		decode: func(c *Config, v any) string {
			return decodeString(&c.Session, v, `a tmux session name such as "qtask"`, checkSession)
		},
		encode: func(c Config) any { return c.Session },
	},
	{
		name: "stop_grace",
		decode: func(c *Config, v any) string {
			return decodeDuration(&c.StopGrace, v, maxStopGrace)
		},
		encode: func(c Config) any { return formatDuration(c.StopGrace) },
	},
	{
		name: "output_max_bytes",
		decode: func(c *Config, v any) string {
			return decodeSize(&c.OutputMaxBytes, v)
		},
		encode: func(c Config) any { return c.OutputMaxBytes },
	},
	{
		name: "foreground_timeout",
		decode: func(c *Config, v any) string {
			return decodeDuration(&c.ForegroundTimeout, v, 0)
		},
		encode: func(c Config) any { return formatDuration(c.ForegroundTimeout) },
	},
	{
		name: "on_timeout",
		decode: func(c *Config, v any) string {
			return decodeChoice(&c.OnTimeout, v, OnTimeoutBackground, OnTimeoutKill)
		},
		encode: func(c Config) any { return c.OnTimeout },
	},
	{
		name: "long_run_note",
		decode: func(c *Config, v any) string {
			return decodeChoice(&c.LongRunNote, v, LongRunNoteAgent, LongRunNoteAlways, LongRunNoteOff)
		},
		encode: func(c Config) any { return c.LongRunNote },
	},
	{
		name:   "keep_promoted_pane",
		decode: func(c *Config, v any) string { return decodeBool(&c.KeepPromotedPane, v) },
		encode: func(c Config) any { return c.KeepPromotedPane },
	},
	{
		name:   "keep_full_screen",
		decode: func(c *Config, v any) string { return decodeBool(&c.KeepFullScreen, v) },
		encode: func(c Config) any { return c.KeepFullScreen },
	},
	{
		name:   "keep_failed_pane",
		decode: func(c *Config, v any) string { return decodeBool(&c.KeepFailedPane, v) },
		encode: func(c Config) any { return c.KeepFailedPane },
	},
	{
		name:   "keep_raw_output",
		decode: func(c *Config, v any) string { return decodeBool(&c.KeepRawOutput, v) },
		encode: func(c Config) any { return c.KeepRawOutput },
	},
	{
		name: "keep_finished",
		decode: func(c *Config, v any) string {
			n, ok := v.(int64)
			if !ok {
				return wantGot("a number of tasks such as 200 (0 keeps every task)", v)
			}
			if n < 0 || n > math.MaxInt32 {
				return fmt.Sprintf("%d is out of range; want 0 (keep every task) to %d", n, math.MaxInt32)
			}
			c.KeepFinished = int(n)
			return ""
		},
		encode: func(c Config) any { return c.KeepFinished },
	},
	{
		name: "status_format",
		decode: func(c *Config, v any) string {
			return decodeString(&c.StatusFormat, v, `a status format such as "⏵{running} ✗{failed}"`, CheckStatusFormat)
		},
		encode: func(c Config) any { return c.StatusFormat },
	},
	{
		name: "agent_windows",
		decode: func(c *Config, v any) string {
			return decodeChoice(&c.AgentWindows, v, AgentWindowsQtask, AgentWindowsCurrent)
		},
		encode: func(c Config) any { return c.AgentWindows },
	},
	{
		name: "wake",
		decode: func(c *Config, v any) string {
			return decodeChoice(&c.Wake, v, WakeNone, WakeTmux)
		},
		encode: func(c Config) any { return c.Wake },
	},
}

// CheckStatusFormat says what is wrong with a status format, or "".
func CheckStatusFormat(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "must not contain control characters (tabs, newlines, escapes)"
	}
	rest := s
	for _, p := range StatusPlaceholders {
		rest = strings.ReplaceAll(rest, p, "")
	}
	if i := strings.Index(rest, "{"); i >= 0 {
		if j := strings.Index(rest[i:], "}"); j >= 0 {
			return fmt.Sprintf("unknown placeholder %s; want {running} or {failed}", rest[i:i+j+1])
		}
	}
	return ""
}

// parse decodes the text of the config file at path over Default and
// reports the first problem in file order.
func parse(path, text string) (Config, error) {
	// The TOML parser skips a UTF-8 byte order mark and reports offsets
	// relative to what follows it; strip it here so our own scan agrees.
	text = strings.TrimPrefix(text, "\ufeff")

	var raw map[string]any
	md, err := toml.Decode(text, &raw)
	if err != nil {
		return Config{}, syntaxError(path, text, err)
	}

	cfg := builtin()
	// fail builds the error for key name, pointing at its value or, when
	// the key itself is the problem, at the key.
	fail := func(name string, atValue bool, msg string) error {
		p := locateKeys(text)[toml.Key{name}.String()]
		col := p.keyCol
		if atValue {
			col = p.valCol
		}
		return &Error{Path: path, Line: p.line, Col: col, Key: name, Msg: msg}
	}

	// Keys come in file order, so the first problem found is the first in
	// the file. No top-level name is handled twice: names only repeat for
	// the keys inside a table, and every table is rejected on first sight
	// because no setting is a table.
	for _, key := range md.Keys() {
		name := key[0]
		s, ok := lookupSetting(name)
		if !ok {
			return Config{}, fail(name, false, fmt.Sprintf("unknown key %q (valid keys: %s)", name, validKeys()))
		}
		if problem := s.decode(&cfg, raw[name]); problem != "" {
			return Config{}, fail(name, true, fmt.Sprintf("key %q: %s", name, problem))
		}
	}
	if cfg.Shell == "" {
		cfg.Shell = defaultShell()
	}
	return cfg, nil
}

// lookupSetting finds the setting for a top-level key.
func lookupSetting(name string) (setting, bool) {
	for _, s := range settings {
		if s.name == name {
			return s, true
		}
	}
	return setting{}, false
}

// validKeys lists the valid keys for "unknown key" messages.
func validKeys() string {
	names := make([]string, len(settings))
	for i, s := range settings {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

// syntaxError converts a TOML parse failure into a one-line *Error.
func syntaxError(path, text string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{Path: path, Msg: "invalid TOML: " + oneLine(err.Error()), err: err}
	}
	msg := pe.Message
	if msg == "" {
		// The library keeps the underlying error private; Error() renders
		// it after a fixed prefix that repeats the line, so drop that.
		prefix := fmt.Sprintf("toml: line %d: ", pe.Position.Line)
		if pe.LastKey != "" {
			prefix = fmt.Sprintf("toml: line %d (last key %q): ", pe.Position.Line, pe.LastKey)
		}
		msg = strings.TrimPrefix(pe.Error(), prefix)
	}
	if strings.HasPrefix(msg, "expected value but found") {
		msg += `; put strings in quotes, as in shell = "bash"`
	}
	// Position.Start is a byte offset; derive the line from it too, since
	// Position.Line is off by one for errors at the end of the input.
	line, col := offsetPosition(text, pe.Position.Start)
	return &Error{Path: path, Line: line, Col: col, Msg: "invalid TOML: " + oneLine(msg), err: err}
}

// oneLine collapses s onto a single line, because Error promises one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// wantGot describes a value of the wrong TOML type.
func wantGot(want string, v any) string {
	return fmt.Sprintf("want %s, got %s", want, describe(v))
}

// describe names a decoded TOML value's type and, for scalars, its value.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", v)
	case int64:
		return fmt.Sprintf("integer %d", v)
	case float64:
		return "float " + strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return fmt.Sprintf("boolean %t", v)
	case time.Time:
		return "a datetime"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	default:
		return fmt.Sprintf("a value of type %T", v)
	}
}

// checkSession returns why s cannot be a tmux session name, or "".
func checkSession(s string) string {
	if s == "" {
		return `must not be empty; want a tmux session name such as "qtask"`
	}
	for _, r := range s {
		if r == ':' || r == '.' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Sprintf("%q contains %q, which tmux target names cannot hold; "+
				"use a name without ':', '.', whitespace or control characters", s, r)
		}
	}
	return ""
}

// decodeString stores in *dst a string that check finds no problem with;
// want describes a good value for the error when v is not a string.
func decodeString(dst *string, v any, want string, check func(string) string) string {
	s, ok := v.(string)
	if !ok {
		return wantGot(want, v)
	}
	if problem := check(s); problem != "" {
		return problem
	}
	*dst = s
	return ""
}

// decodeChoice stores in *dst a string that is one of choices.
func decodeChoice(dst *string, v any, choices ...string) string {
	s, ok := v.(string)
	if !ok {
		quoted := make([]string, len(choices))
		for i, c := range choices {
			quoted[i] = strconv.Quote(c)
		}
		last := len(quoted) - 1
		return wantGot(strings.Join(quoted[:last], ", ")+" or "+quoted[last], v)
	}
	if !slices.Contains(choices, s) {
		return fmt.Sprintf("%q is not one of %s", s, strings.Join(choices, ", "))
	}
	*dst = s
	return ""
}

// decodeDuration stores a duration string in *d. The integer 0 is also
// accepted because zero needs no unit. A limit of 0 means no upper limit.
func decodeDuration(d *time.Duration, v any, limit time.Duration) string {
	const want = `a duration such as "30s", "5m", "1h30m" or "7d"`
	var (
		parsed time.Duration
		shown  string // v as the user wrote it, for messages
	)
	switch v := v.(type) {
	case string:
		var err error
		if parsed, err = ParseDuration(v); err != nil {
			return fmt.Sprintf("%q is not %s", v, want)
		}
		shown = strconv.Quote(v)
	case int64:
		if v != 0 {
			return wantGot(want, v)
		}
		shown = "0"
	default:
		return wantGot(want, v)
	}
	if parsed < 0 {
		return fmt.Sprintf("%s is negative; want 0 or more", shown)
	}
	if limit > 0 && parsed > limit {
		return fmt.Sprintf("%s is more than the maximum of %s", shown, formatDuration(limit))
	}
	*d = parsed
	return ""
}

// maxDays bounds a duration given in days: 100,000 days (about 270
// years) is far below where a time.Duration overflows.
const maxDays = 100_000

// ParseDuration reads a duration the one way qtask takes them, in its
// flags (--timeout, --grace, --older-than, …) and its config: as Go writes
// them ("90m", "1h30m", "500ms") or a whole number of days ("7d"), which
// Go's syntax lacks. A sign is allowed (callers refuse what they must);
// whether 0 or a negative value means anything is the caller's to say.
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > maxDays || n < -maxDays {
			return 0, fmt.Errorf("%q is not a duration such as 30s, 90m, 12h or 7d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 30s, 90m, 12h or 7d", s)
	}
	return d, nil
}

// formatDuration renders d the way a user would write it ("2m" rather
// than Go's "2m0s"); time.ParseDuration reads the result back exactly.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// sizeUnits are the suffixes a size string may carry, matched
// case-insensitively.
var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10},
	{"MiB", 1 << 20},
	{"GiB", 1 << 30},
}

// decodeSize stores a byte count in *n: either a TOML integer or a string
// holding a non-negative integer with an optional KiB, MiB or GiB suffix.
// decodeBool sets *dst from a TOML boolean.
func decodeBool(dst *bool, v any) string {
	b, ok := v.(bool)
	if !ok {
		return wantGot("true or false", v)
	}
	*dst = b
	return ""
}

func decodeSize(n *int64, v any) string {
	const want = `an integer number of bytes or a string such as "512KiB", "32MiB" or "1GiB"`
	var (
		size  int64
		shown string // v as the user wrote it, for messages
	)
	switch v := v.(type) {
	case int64:
		size, shown = v, strconv.FormatInt(v, 10)
	case string:
		var problem string
		if size, problem = parseSize(v); problem != "" {
			return fmt.Sprintf("%q %s; want %s", v, problem, want)
		}
		shown = strconv.Quote(v)
	default:
		return wantGot(want, v)
	}
	if size < minOutputMaxBytes {
		return fmt.Sprintf("%s is less than the minimum of 64KiB (%d bytes)", shown, minOutputMaxBytes)
	}
	*n = size
	return ""
}

// parseSize parses a size string. On failure it returns why, phrased to
// follow the quoted input.
func parseSize(s string) (int64, string) {
	num, factor := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if len(num) >= len(u.suffix) && strings.EqualFold(num[len(num)-len(u.suffix):], u.suffix) {
			num, factor = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.factor
			break
		}
	}
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return 0, "is not a size"
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/factor {
		return 0, "is too large"
	}
	return n * factor, ""
}

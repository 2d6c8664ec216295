package main

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/qtask/qtask/tasks"
)

// appendTaskJSON appends t as json.Marshal encodes it, byte for byte
// (TestTaskJSONIsMarshals and FuzzTaskJSON hold it to that). `ls --json` of
// a thousand tasks spent most of its encoding in encoding/json's
// reflection, so the usual task — strings of printable ASCII that need no
// escape, times within years 0–9999 — is written here, and any other goes
// through json.Marshal whole.
func appendTaskJSON(buf []byte, t *tasks.Task) ([]byte, error) {
	if t == nil {
		return append(buf, "null"...), nil
	}
	e := taskEncoder{b: buf, ok: true}
	e.b = append(e.b, `{"id":`...)
	e.quoted(t.ID)
	e.str("name", t.Name)
	e.str("kind", string(t.Kind))
	e.str("command", t.Command)
	e.str("cwd", t.Cwd)
	e.str("scope", t.Scope)
	e.str("status", string(t.Status))
	e.intPtr("exit_code", t.ExitCode)
	e.str("error", t.Error)
	e.int("pid", t.PID)
	e.str("pane_id", t.PaneID)
	e.time("started_at", &t.StartedAt)
	e.time("ended_at", t.EndedAt)
	e.str("output_path", t.OutputPath)
	e.bool("background", t.Background)
	e.bool("output_complete", t.OutputComplete)
	if t.OutputLoss != "" {
		e.str("output_loss", t.OutputLoss)
	}
	if t.Settling != "" {
		e.str("settling", t.Settling)
	}
	if t.Events != 0 {
		e.int("events", t.Events)
	}
	if t.EventsDropped != 0 {
		e.int("events_dropped", t.EventsDropped)
	}
	e.b = append(e.b, '}')
	if e.ok {
		return e.b, nil
	}
	data, err := json.Marshal(t)
	return append(buf, data...), err
}

// taskEncoder writes a task's fields in Task's order; ok turns false at
// the first value it cannot write as json.Marshal would.
type taskEncoder struct {
	b  []byte
	ok bool
}

func (e *taskEncoder) key(k string) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

func (e *taskEncoder) str(k, s string) {
	e.key(k)
	e.quoted(s)
}

// quoted writes s in quotes if json.Marshal would write it unescaped.
func (e *taskEncoder) quoted(s string) {
	for i := 0; i < len(s); i++ {
		// json.Marshal escapes controls, quotes, backslashes and, for
		// HTML, <, > and &; beyond ASCII it checks UTF-8 and U+2028/9.
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			e.ok = false
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

func (e *taskEncoder) int(k string, n int) {
	e.key(k)
	e.b = strconv.AppendInt(e.b, int64(n), 10)
}

func (e *taskEncoder) intPtr(k string, p *int) {
	if p == nil {
		e.key(k)
		e.b = append(e.b, "null"...)
		return
	}
	e.int(k, *p)
}

func (e *taskEncoder) bool(k string, v bool) {
	e.key(k)
	e.b = strconv.AppendBool(e.b, v)
}

// time writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds); nil is null. A time it would refuse, or write otherwise,
// is left to it.
func (e *taskEncoder) time(k string, t *time.Time) {
	e.key(k)
	if t == nil {
		e.b = append(e.b, "null"...)
		return
	}
	// MarshalJSON refuses years outside 0–9999 and offsets of a day or more.
	if _, offset := t.Zone(); t.Year() < 0 || t.Year() > 9999 || offset <= -86400 || offset >= 86400 {
		e.ok = false
		return
	}
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '"')
}

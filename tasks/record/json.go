package record

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Records and tasks are encoded as json.Marshal encodes them, byte for byte
// (TestRecordJSONIsMarshals, FuzzRecordJSON and cmd/qtask's task tests hold
// them to that), without its reflection: building json.Marshal's encoder for
// the record type was 7 % of the CPU of a `qtask run --bg` and 5 % of its
// wrapper's, and encoding a thousand tasks most of `ls --json`'s. Values
// the fast path does not write as json.Marshal would (escapes, times
// outside years 0–9999) send the whole value through json.Marshal.

// AppendJSON appends t as json.Marshal encodes it.
func (t *Task) AppendJSON(buf []byte) ([]byte, error) {
	e := jsonEncoder{b: buf, ok: true}
	e.task(t)
	e.b = append(e.b, '}')
	if e.ok {
		return e.b, nil
	}
	data, err := json.Marshal(t)
	return append(buf, data...), err
}

// AppendJSON appends r as json.Marshal encodes it: the task's fields, then
// the Record's own, those left out when empty as their tags say.
func (r *Record) AppendJSON(buf []byte) ([]byte, error) {
	e := jsonEncoder{b: buf, ok: true}
	e.task(&r.Task)
	e.intIf("wrapper_pid", int64(r.WrapperPID))
	e.uintIf("wrapper_start", r.WrapperStart)
	e.uintIf("command_start", r.CommandStart)
	e.intIf("session", int64(r.Session))
	e.boolIf("adopted", r.Adopted)
	e.boolIf("await_scrollback", r.AwaitScrollback)
	if r.TmuxServer != (Record{}).TmuxServer {
		e.str("tmux_server", r.TmuxServer.String())
	}
	e.strIf("end_marker", r.EndMarker)
	e.intIf("output_max_bytes", r.OutputMaxBytes)
	e.boolIf("keep_full_screen", r.KeepFullScreen)
	e.boolIf("keep_failed_pane", r.KeepFailedPane)
	e.boolIf("keep_raw_output", r.KeepRawOutput)
	e.strIf("status_format", r.StatusFormat)
	e.boolIf("output_acked", r.OutputAcked)
	e.timeIf("stop_requested_at", r.StopRequestedAt)
	e.strIf("stop_reason", r.StopReason)
	e.intIf("waiter_pid", int64(r.WaiterPID))
	e.strIf("caller_pane", r.CallerPane)
	e.timeIf("promoted_at", r.PromotedAt)
	e.timeIf("exited_at", r.ExitedAt)
	if r.ExitedCode != nil {
		e.intPtr("exited_code", r.ExitedCode)
	}
	e.b = append(e.b, '}')
	if e.ok {
		return e.b, nil
	}
	data, err := json.Marshal(r)
	return append(buf, data...), err
}

// jsonEncoder writes fields in the order given; ok turns false at the first
// value it cannot write as json.Marshal would.
type jsonEncoder struct {
	b  []byte
	ok bool
}

// task writes t's fields in Task's order, after the opening brace.
func (e *jsonEncoder) task(t *Task) {
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
	e.int("pid", int64(t.PID))
	e.str("pane_id", t.PaneID)
	e.time("started_at", &t.StartedAt)
	e.time("ended_at", t.EndedAt)
	e.str("output_path", t.OutputPath)
	e.bool("background", t.Background)
	e.bool("output_complete", t.OutputComplete)
	e.strIf("output_loss", t.OutputLoss)
	e.strIf("settling", t.Settling)
	e.intIf("events", int64(t.Events))
	e.intIf("events_dropped", int64(t.EventsDropped))
	e.boolIf("pane_kept", t.PaneKept)
	e.boolIf("caller_gone", t.CallerGone)
}

func (e *jsonEncoder) key(k string) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

func (e *jsonEncoder) str(k, s string) {
	e.key(k)
	e.quoted(s)
}

// strIf writes a string field tagged omitempty.
func (e *jsonEncoder) strIf(k, s string) {
	if s != "" {
		e.str(k, s)
	}
}

// quoted writes s in quotes if json.Marshal would write it unescaped: no
// controls, quotes, backslashes or (for HTML) <, > and &, and beyond ASCII
// valid UTF-8 without U+2028 and U+2029, which it escapes.
func (e *jsonEncoder) quoted(s string) {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			ascii = false
		case c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&':
			e.ok = false
			return
		}
	}
	if !ascii && (!utf8.ValidString(s) || strings.ContainsRune(s, '\u2028') || strings.ContainsRune(s, '\u2029')) {
		e.ok = false
		return
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

func (e *jsonEncoder) int(k string, n int64) {
	e.key(k)
	e.b = strconv.AppendInt(e.b, n, 10)
}

// intIf writes an integer field tagged omitempty.
func (e *jsonEncoder) intIf(k string, n int64) {
	if n != 0 {
		e.int(k, n)
	}
}

// uintIf writes an unsigned integer field tagged omitempty.
func (e *jsonEncoder) uintIf(k string, n uint64) {
	if n != 0 {
		e.key(k)
		e.b = strconv.AppendUint(e.b, n, 10)
	}
}

func (e *jsonEncoder) intPtr(k string, p *int) {
	if p == nil {
		e.key(k)
		e.b = append(e.b, "null"...)
		return
	}
	e.int(k, int64(*p))
}

func (e *jsonEncoder) bool(k string, v bool) {
	e.key(k)
	e.b = strconv.AppendBool(e.b, v)
}

// boolIf writes a bool field tagged omitempty.
func (e *jsonEncoder) boolIf(k string, v bool) {
	if v {
		e.bool(k, v)
	}
}

// time writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds); nil is null. A time it would refuse is left to it.
func (e *jsonEncoder) time(k string, t *time.Time) {
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

// timeIf writes a *time.Time field tagged omitempty: nil is left out.
func (e *jsonEncoder) timeIf(k string, t *time.Time) {
	if t != nil {
		e.time(k, t)
	}
}

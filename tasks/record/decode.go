package record

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/qtask/qtask/tmux"
)

// Unmarshal decodes a record file. encoding/json was most of `ls`'s
// CPU with a thousand records (reflection, a validating pre-scan, an
// allocation per field), so the form the store writes — compact, known keys,
// strings without escapes — is read by decodeRecord; anything else goes to
// encoding/json, whose result (or error) stays the reference.
func Unmarshal(data []byte, r *Record) error {
	return UnmarshalWithText(data, string(data), r)
}

// UnmarshalWithText is Unmarshal for data whose copy as a string,
// text, the caller has already: the string fields of r slice it.
func UnmarshalWithText(data []byte, text string, r *Record) error {
	if decodeRecord(data, text, r) {
		return nil
	}
	*r = Record{}
	return json.Unmarshal(data, r)
}

// decodeRecord fills r from data (and text, its copy as a string, which the
// string fields slice: one allocation per record, or per index, rather than
// one per field) and reports true only if data is a compact
// JSON object of Record keys whose values it decodes exactly as
// encoding/json would (FuzzDecodeRecord holds it to that). It declines —
// false, r in any state — on whitespace inside the object, escapes, unknown
// or differently cased keys, non-integer numbers and anything invalid.
func decodeRecord(data []byte, text string, r *Record) bool {
	d := recordDecoder{b: data, s: text}
	if !d.next('{') {
		return false
	}
	if !d.next('}') {
		for {
			key, ok := d.str()
			if !ok || !d.next(':') || !d.field(key, r) {
				return false
			}
			if d.next('}') {
				break
			}
			if !d.next(',') {
				return false
			}
		}
	}
	for _, c := range d.b[d.i:] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// recordDecoder is a cursor over a record's bytes, b, and s, their copy
// as a string.
type recordDecoder struct {
	b []byte
	s string
	i int
}

// field decodes the value of key into r, declining keys encoding/json
// would match only case-insensitively or not at all.
func (d *recordDecoder) field(key string, r *Record) bool {
	switch key {
	case "id":
		return d.string(&r.ID)
	case "name":
		return d.string(&r.Name)
	case "kind":
		return d.string((*string)(&r.Kind))
	case "command":
		return d.string(&r.Command)
	case "cwd":
		return d.string(&r.Cwd)
	case "scope":
		return d.string(&r.Scope)
	case "status":
		return d.string((*string)(&r.Status))
	case "exit_code":
		return d.intPtr(&r.ExitCode)
	case "error":
		return d.string(&r.Error)
	case "pid":
		return d.int(&r.PID)
	case "pane_id":
		return d.string(&r.PaneID)
	case "started_at":
		return d.time(&r.StartedAt)
	case "ended_at":
		return d.timePtr(&r.EndedAt)
	case "output_path":
		return d.string(&r.OutputPath)
	case "background":
		return d.bool(&r.Background)
	case "output_complete":
		return d.bool(&r.OutputComplete)
	case "output_loss":
		return d.string(&r.OutputLoss)
	case "settling":
		return d.string(&r.Settling)
	case "events":
		return d.int(&r.Events)
	case "events_dropped":
		return d.int(&r.EventsDropped)
	case "pane_kept":
		return d.bool(&r.PaneKept)
	case "caller_gone":
		return d.bool(&r.CallerGone)
	case "wrapper_pid":
		return d.int(&r.WrapperPID)
	case "wrapper_start":
		return d.uint64(&r.WrapperStart)
	case "command_start":
		return d.uint64(&r.CommandStart)
	case "session":
		return d.int(&r.Session)
	case "adopted":
		return d.bool(&r.Adopted)
	case "await_scrollback":
		return d.bool(&r.AwaitScrollback)
	case "tmux_server":
		return d.server(&r.TmuxServer)
	case "end_marker":
		return d.string(&r.EndMarker)
	case "output_max_bytes":
		return d.int64(&r.OutputMaxBytes)
	case "keep_full_screen":
		return d.bool(&r.KeepFullScreen)
	case "keep_failed_pane":
		return d.bool(&r.KeepFailedPane)
	case "keep_raw_output":
		return d.bool(&r.KeepRawOutput)
	case "status_format":
		return d.string(&r.StatusFormat)
	case "output_acked":
		return d.bool(&r.OutputAcked)
	case "stop_requested_at":
		return d.timePtr(&r.StopRequestedAt)
	case "stop_reason":
		return d.string(&r.StopReason)
	case "waiter_pid":
		return d.int(&r.WaiterPID)
	case "caller_pane":
		return d.string(&r.CallerPane)
	case "promoted_at":
		return d.timePtr(&r.PromotedAt)
	case "exited_at":
		return d.timePtr(&r.ExitedAt)
	case "exited_code":
		return d.intPtr(&r.ExitedCode)
	}
	return false
}

// next consumes c if it comes next.
func (d *recordDecoder) next(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// word consumes the literal w (true, false, null) if it comes next.
func (d *recordDecoder) word(w string) bool {
	if len(d.s)-d.i >= len(w) && d.s[d.i:d.i+len(w)] == w {
		d.i += len(w)
		return true
	}
	return false
}

// str reads a string without escapes, of valid UTF-8 and no control
// characters, and returns what is between the quotes.
func (d *recordDecoder) str() (string, bool) {
	if !d.next('"') {
		return "", false
	}
	start, ascii := d.i, true
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.s[start:d.i]
			d.i++
			return s, ascii || utf8.ValidString(s)
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

func (d *recordDecoder) string(v *string) bool {
	s, ok := d.str()
	*v = s
	return ok
}

// server declines what tmux.ParseServer refuses, leaving the error to
// encoding/json (tmux.Server.UnmarshalText).
func (d *recordDecoder) server(v *tmux.Server) bool {
	s, ok := d.str()
	if !ok {
		return false
	}
	parsed, err := tmux.ParseServer(s)
	*v = parsed
	return err == nil
}

func (d *recordDecoder) bool(v *bool) bool {
	switch {
	case d.word("true"):
		*v = true
	case d.word("false"):
		*v = false
	default:
		return false
	}
	return true
}

// integer reads a JSON number that is an integer: an optional minus, then
// 0 or digits without a leading zero, with no fraction or exponent.
func (d *recordDecoder) integer() (string, bool) {
	start := d.i
	d.next('-')
	digits := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i == digits || d.b[digits] == '0' && d.i-digits > 1 {
		return "", false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return "", false
	}
	return d.s[start:d.i], true
}

func (d *recordDecoder) int(v *int) bool {
	s, ok := d.integer()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(s, 10, strconv.IntSize)
	*v = int(n)
	return err == nil
}

func (d *recordDecoder) int64(v *int64) bool {
	s, ok := d.integer()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	*v = n
	return err == nil
}

func (d *recordDecoder) uint64(v *uint64) bool {
	s, ok := d.integer()
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	*v = n
	return err == nil
}

// intPtr reads null (nil) or an integer, as encoding/json fills an *int.
func (d *recordDecoder) intPtr(v **int) bool {
	if d.word("null") {
		*v = nil
		return true
	}
	n := new(int)
	*v = n
	return d.int(n)
}

// time reads a quoted timestamp with time.Time's own UnmarshalJSON, the
// method encoding/json calls.
func (d *recordDecoder) time(v *time.Time) bool {
	start := d.i
	if _, ok := d.str(); !ok {
		return false
	}
	return v.UnmarshalJSON(d.b[start:d.i]) == nil
}

// timePtr reads null (nil) or a timestamp, as encoding/json fills a
// *time.Time.
func (d *recordDecoder) timePtr(v **time.Time) bool {
	if d.word("null") {
		*v = nil
		return true
	}
	t := new(time.Time)
	*v = t
	return d.time(t)
}

package record

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/qtask/qtask/tmux"
)

// checkRecordJSON holds Record.AppendJSON to json.Marshal, byte for byte.
func checkRecordJSON(t *testing.T, r *Record) {
	t.Helper()
	want, wantErr := json.Marshal(r)
	got, err := r.AppendJSON([]byte("prefix"))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("AppendJSON(%+v): error %v, json.Marshal's %v", r, err, wantErr)
	}
	if wantErr == nil && string(got) != "prefix"+string(want) {
		t.Errorf("AppendJSON(%+v)\n= %s\njson.Marshal gives\n  %s", r, got, want)
	}
}

// recordOfEveryField has every field of a Record set.
func recordOfEveryField() Record {
	code, exited := 3, 143
	at := time.Date(2026, 11, 26, 15, 40, 1, 120000000, time.UTC)
	return Record{
		Task: Task{ID: "0004e2f7", Name: "build ⏵", Kind: KindMonitor, Command: "make -j8 all", Cwd: "/src",
			Scope: "%3", Status: StatusFailed, ExitCode: &code, Error: "exited with code 3", PID: 4242, PaneID: "%7",
			StartedAt: at.Add(-time.Minute), EndedAt: &at, OutputPath: "/state/output/0004e2f7.log", Background: true,
			OutputComplete: true, OutputLoss: "1 byte", Settling: "no space left on device", Events: 5, EventsDropped: 2, PaneKept: true, CallerGone: true},
		WrapperPID: 4241, WrapperStart: 1 << 40, CommandStart: 1<<40 + 2, Session: 4241, Adopted: true, AwaitScrollback: true,
		TmuxServer: tmux.NewSocketServer("/tmp/tmux-0/default"), EndMarker: "qtask-end:0004e2f7:aa502120", OutputMaxBytes: 32 << 20,
		KeepFullScreen: true, KeepFailedPane: true, KeepRawOutput: true, StatusFormat: "⏵{running} ✗{failed}", OutputAcked: true, StopRequestedAt: &at, StopReason: "timed out",
		WaiterPID: 99, CallerPane: "%1", PromotedAt: &at, ExitedAt: &at, ExitedCode: &exited,
	}
}

// TestRecordJSONIsMarshals: a Record with every field set, with none, and
// with each one alone (by reflection, so a field added to the Record or
// the task and not to AppendJSON fails here), and strings and times of
// every kind the fast path must hand to encoding/json, encode as
// json.Marshal encodes them.
func TestRecordJSONIsMarshals(t *testing.T) {
	full := recordOfEveryField()
	checkRecordJSON(t, &full)
	checkRecordJSON(t, &Record{})
	each := func(full reflect.Value, set func(one *Record) reflect.Value) {
		for i := range full.NumField() {
			one := Record{}
			set(&one).Field(i).Set(full.Field(i))
			checkRecordJSON(t, &one)
		}
	}
	each(reflect.ValueOf(full), func(one *Record) reflect.Value { return reflect.ValueOf(one).Elem() })
	each(reflect.ValueOf(full.Task), func(one *Record) reflect.Value { return reflect.ValueOf(&one.Task).Elem() })
	for _, s := range []string{"a\"b", `back\slash`, "<&>", "tab\there", "nl\n", "\x00", "é", "日本", "\u2028", "\u2029",
		"\xff", "ok\xc3", "\x7f", "\u0085", "~ !#$%'()*+,-./:;=?@[]^_`{|}"} {
		checkRecordJSON(t, &Record{Task: Task{Command: s, Name: s}, StatusFormat: s, CallerPane: s})
	}
	for _, at := range []time.Time{
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 1, time.FixedZone("", 5*3600+30*60)),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)), time.Date(2026, 1, 1, 0, 0, 0, 500, time.Local),
	} {
		checkRecordJSON(t, &Record{Task: Task{StartedAt: at, EndedAt: &at}, ExitedAt: &at})
	}
}

// FuzzRecordJSON: whatever a Record holds, AppendJSON encodes it as
// json.Marshal does.
func FuzzRecordJSON(f *testing.F) {
	f.Add("0004e2f7", "make test", "⏵{running} ✗{failed}", "exited with code 3", 3, int64(1795000000123456789), 60, uint64(1<<40))
	f.Add("x", "<a&b>\"\\", "\u2028", "\xff", -1, int64(-62167219200000000), -3600, uint64(0))
	f.Fuzz(func(t *testing.T, id, command, format, errText string, n int, nanos int64, offset int, start uint64) {
		at := time.Unix(0, nanos).In(time.FixedZone("", offset))
		checkRecordJSON(t, &Record{
			Task:       Task{ID: id, Command: command, Error: errText, ExitCode: &n, PID: n, StartedAt: at, EndedAt: &at, Events: n},
			WrapperPID: n, WrapperStart: start, StatusFormat: format, EndMarker: errText, OutputMaxBytes: int64(n), ExitedAt: &at, ExitedCode: &n,
		})
	})
}

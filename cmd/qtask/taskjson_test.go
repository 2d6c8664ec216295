package main

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks"
)

// checkTaskJSON holds appendTaskJSON to json.Marshal, byte for byte.
func checkTaskJSON(t *testing.T, task *tasks.Task) {
	t.Helper()
	want, wantErr := json.Marshal(task)
	got, err := appendTaskJSON([]byte("prefix"), task)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("appendTaskJSON(%+v): error %v, json.Marshal's %v", task, err, wantErr)
	}
	if wantErr == nil && string(got) != "prefix"+string(want) {
		t.Errorf("appendTaskJSON(%+v)\n= %s\njson.Marshal gives\n  %s", task, got, want)
	}
}

// TestTaskJSONIsMarshals: every field of Task, set and unset, and values
// of every kind the fast path must hand to encoding/json, encode as
// json.Marshal encodes them. A field added to Task and not to
// appendTaskJSON fails here: each is filled in turn by reflection.
func TestTaskJSONIsMarshals(t *testing.T) {
	code, zero := 3, 0
	ended := time.Date(2026, 11, 26, 15, 40, 1, 120000000, time.UTC)
	full := tasks.Task{ID: "0004e2f7", Name: "build", Kind: tasks.KindMonitor, Command: "make -j8 all", Cwd: "/src",
		Scope: "%3", Status: tasks.StatusFailed, ExitCode: &code, Error: "exited with code 3", PID: 4242, PaneID: "%7",
		StartedAt: ended.Add(-time.Minute), EndedAt: &ended, OutputPath: "/state/output/0004e2f7.log", Background: true,
		OutputComplete: true, OutputLoss: "1 byte", Settling: "no space left on device", Events: 5, EventsDropped: 2}
	checkTaskJSON(t, &full)
	checkTaskJSON(t, &tasks.Task{})
	checkTaskJSON(t, nil)
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		one := tasks.Task{}
		reflect.ValueOf(&one).Elem().Field(i).Set(v.Field(i))
		checkTaskJSON(t, &one)
	}
	lmt, _ := time.LoadLocation("Europe/Amsterdam")
	for _, s := range []string{"a\"b", `back\slash`, "<&>", "tab\there", "nl\n", "\x00", "é", "日本", "\u2028", "\xff", "\x7f", "~ !#$%'()*+,-./:;=?@[]^_`{|}"} {
		checkTaskJSON(t, &tasks.Task{Command: s, Name: s, Error: s})
	}
	for _, at := range []time.Time{
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 1, time.FixedZone("", 5*3600+30*60)), time.Date(1890, 1, 1, 0, 0, 0, 0, lmt),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600)), time.Date(2026, 1, 1, 0, 0, 0, 500, time.Local),
	} {
		checkTaskJSON(t, &tasks.Task{StartedAt: at, EndedAt: &at, ExitCode: &zero})
	}
}

// FuzzTaskJSON: whatever a task holds, appendTaskJSON encodes it as
// json.Marshal does.
func FuzzTaskJSON(f *testing.F) {
	f.Add("0004e2f7", "make test", "/src", "exited with code 3", 3, int64(1795000000123456789), 60, true)
	f.Add("x", "<a&b>\"\\", "\u2028", "\xff", -1, int64(-62167219200000000), -3600, false)
	f.Fuzz(func(t *testing.T, id, command, cwd, errText string, code int, nanos int64, offset int, background bool) {
		at := time.Unix(0, nanos).In(time.FixedZone("", offset))
		checkTaskJSON(t, &tasks.Task{ID: id, Command: command, Cwd: cwd, Error: errText, ExitCode: &code, PID: code,
			StartedAt: at, EndedAt: &at, Background: background, Events: code, OutputLoss: errText})
	})
}

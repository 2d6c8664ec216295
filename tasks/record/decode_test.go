package record

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/qtask/qtask/tmux"
)

// fullRecord is a Record with every field set to a value that is not its
// zero, found by reflection, so a field added to Record later is in it too.
func fullRecord(t testing.TB) *Record {
	t.Helper()
	var r Record
	when := time.Date(2026, 11, 23, 19, 10, 14, 211961318, time.UTC)
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f, sf := v.Field(i), v.Type().Field(i)
			n++
			switch {
			case sf.Anonymous:
				fill(f)
			case f.Type() == reflect.TypeOf(time.Time{}):
				f.Set(reflect.ValueOf(when.Add(time.Duration(n) * time.Second)))
			case f.Type() == reflect.TypeOf(&time.Time{}):
				at := when.Add(time.Duration(n) * time.Minute)
				f.Set(reflect.ValueOf(&at))
			case f.Type() == reflect.TypeOf(new(int)):
				code := n
				f.Set(reflect.ValueOf(&code))
			case f.Type() == reflect.TypeOf(tmux.Server{}):
				f.Set(reflect.ValueOf(tmux.NewSocketServer("/tmp/" + sf.Name + " ⏵ socket")))
			case f.Kind() == reflect.String:
				f.SetString(sf.Name + " ⏵ value")
			case f.Kind() == reflect.Bool:
				f.SetBool(true)
			case f.CanInt():
				f.SetInt(int64(1000 + n))
			case f.CanUint():
				f.SetUint(uint64(1000 + n))
			default:
				t.Fatalf("Record field %s has type %s, which fullRecord cannot fill", sf.Name, f.Type())
			}
		}
	}
	fill(reflect.ValueOf(&r).Elem())
	return &r
}

// checkDecode holds decodeRecord to encoding/json on data: when it takes
// data, encoding/json must take it too and fill the very same Record. It
// reports whether decodeRecord took it.
func checkDecode(t *testing.T, data []byte) bool {
	t.Helper()
	var fast, std Record
	if !decodeRecord(data, string(data), &fast) {
		return false
	}
	if err := json.Unmarshal(data, &std); err != nil {
		t.Fatalf("decodeRecord took %q, which encoding/json refuses: %v", data, err)
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("decodeRecord(%q)\n= %+v\nencoding/json gives\n  %+v", data, fast, std)
	}
	return true
}

// TestDecodeRecordTakesWhatSaveWrites: every record save writes — every
// field set, or a running task's nulls — is read by the fast path (a field
// it does not know would send every `ls` back to encoding/json), and read
// as encoding/json reads it.
func TestDecodeRecordTakesWhatSaveWrites(t *testing.T) {
	full := fullRecord(t)
	running := &Record{Task: Task{ID: "0004e2f7", Kind: KindShell, Status: StatusRunning, StartedAt: time.Now()}}
	for _, r := range []*Record{full, running, {}} {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !checkDecode(t, append(data, '\n')) {
			t.Errorf("decodeRecord declined a Record as save writes it: %s", data)
		}
	}
}

// TestDecodeRecordDeclinesTheUnusual: what save never writes goes to
// encoding/json, so its result and its error, which `ls` prints, are
// unchanged.
func TestDecodeRecordDeclinesTheUnusual(t *testing.T) {
	for _, data := range []string{
		``, `null`, ` {}`, `{ }`, `{"id":"a" }`, `{"id" :"a"}`, `{"id":"a"}x`, `{"id":"a"}{}`,
		`{"id":"a\"b"}`, `{"id":"a\u0041"}`, "{\"id\":\"a\tb\"}", "{\"id\":\"\xff\"}",
		`{"ID":"a"}`, `{"unknown":1}`, `{"id":1}`, `{"id":null}`, `{"id":"a",}`, `{"id":"a"`,
		`{"pid":1.0}`, `{"pid":1e3}`, `{"pid":01}`, `{"pid":-}`, `{"pid":"1"}`, `{"pid":99999999999999999999}`,
		`{"wrapper_start":-1}`, `{"background":1}`, `{"background":nul}`, `{"background":truex}`,
		`{"started_at":"yesterday"}`, `{"started_at":null}`, `{"started_at":1}`, `{"ended_at":"2026-11-23"}`,
		`{"exit_code":1.5}`, `{"exit_code":"0"}`, `{"tmux_server":"qtask"}`, `{"tmux_server":""}`,
	} {
		if checkDecode(t, []byte(data)) {
			t.Errorf("decodeRecord took %q, which save never writes", data)
		}
		var got, want Record
		gotErr, wantErr := Unmarshal([]byte(data), &got), json.Unmarshal([]byte(data), &want)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
			t.Errorf("Unmarshal(%q) = %+v, %v; encoding/json gives %+v, %v", data, got, gotErr, want, wantErr)
		}
	}
}

// FuzzDecodeRecord: whatever decodeRecord takes, encoding/json reads the
// same.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"id":"0004e2f7","name":"","kind":"shell","status":"running","exit_code":null,"pid":-0,` +
		`"started_at":"2026-11-23T19:10:14.211961318+01:00","ended_at":null,"background":false,"wrapper_start":677882,` +
		`"output_max_bytes":33554432,"status_format":"⏵{running} ✗{failed}","exited_code":0,"id":"dup"}` + "\r\n"))
	full, err := json.Marshal(fullRecord(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	f.Add([]byte(`{"started_at":"2026-02-30T25:00:00Z","exit_code":-9223372036854775808,"session":9223372036854775807}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
	})
}

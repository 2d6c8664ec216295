package agent

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// sleepCases are commands and the leading sleep agent mode must refuse in
// them (0: none). They double as the fuzz corpus.
var sleepCases = []struct {
	cmd  string
	want time.Duration
}{
	// Refused: the command waits doing nothing.
	{"sleep 5", 5 * time.Second},
	{"sleep 2", 2 * time.Second},
	{"  sleep 5  ", 5 * time.Second},
	{"\n\nsleep 5", 5 * time.Second},
	{"# wait for the server\nsleep 5", 5 * time.Second},
	{"sleep 5 && curl localhost:8080", 5 * time.Second},
	{"sleep 5 || true", 5 * time.Second},
	{"sleep 5; make", 5 * time.Second},
	{"sleep 5\nmake", 5 * time.Second},
	{"sleep 5 # give it time", 5 * time.Second},
	{"sleep 5# not a comment, an operand", 0},
	{"sleep 5 #\n", 5 * time.Second},
	{"sleep 2000ms", 2 * time.Second},
	{"sleep 1.5m", 90 * time.Second},
	{"sleep 1h", time.Hour},
	{"sleep 1d", 24 * time.Hour},
	{"sleep 1 1", 2 * time.Second},
	{"sleep '5'", 5 * time.Second},
	{`sleep "5"`, 5 * time.Second},
	{`sleep \5`, 5 * time.Second},
	{"/bin/sleep 5", 5 * time.Second},
	{"sleep infinity", math.MaxInt64},
	{"bash -c 'sleep 5'", 5 * time.Second},
	{"sh -c 'sleep 5; echo done'", 5 * time.Second},
	{`bash -lc "sleep 30"`, 30 * time.Second},
	{`bash -c "bash -c 'sleep 9'"`, 9 * time.Second},
	{"sleep \\\n 5", 5 * time.Second},
	// Allowed.
	{"sleep 1", 0},
	{"sleep 1.999", 0},
	{"sleep 1500ms", 0},
	{"sleep 5 &", 0},
	{"sleep 5 & wait", 0},
	{"sleep 5 | cat", 0},
	{"make && sleep 5", 0},
	{"echo sleep 5", 0},
	{"echo 'sleep 5'", 0},
	{"sleep $N", 0},
	{`sleep "$N"`, 0},
	{"sleep $(cat n)", 0},
	{"sleep `cat n`", 0},
	{"sleep", 0},
	{"sleep x", 0},
	{"sleep -5", 0},
	{"sleep 5s5", 0},
	{"sleep 5 >/dev/null", 0},
	{"(sleep 5)", 0},
	{"sleeper 5", 0},
	{"bash -c 'sleep 5 &'", 0},
	{"bash -c 'sleep 1'", 0},
	{"bash -x 'sleep 5'", 0},
	{"bash -c 'sleep 5' &", 0},
	{"bash -c \"sleep $N\"", 0},
	{"echo '#'; sleep 5", 0},
	{"", 0},
	{"# sleep 5", 0},
}

func TestCheckSleep(t *testing.T) {
	for _, tc := range sleepCases {
		err := CheckSleep(tc.cmd, "qtask")
		var se *SleepError
		switch {
		case tc.want == 0 && err != nil:
			t.Errorf("CheckSleep(%q) refused a command agent mode must run: %v", tc.cmd, err)
		case tc.want == 0:
		case !errors.As(err, &se):
			t.Errorf("CheckSleep(%q) let a %v sleep through", tc.cmd, tc.want)
		case se.Duration != tc.want:
			t.Errorf("CheckSleep(%q) refused a sleep of %v, want %v", tc.cmd, se.Duration, tc.want)
		}
	}
}

func TestSleepErrorGuides(t *testing.T) {
	// qtask off the agent's PATH: the advice names it as the agent's
	// shell can run it.
	msg := CheckSleep("sleep 30", "/opt/q/qtask").Error()
	for _, want := range []string{"for 30s", "`/opt/q/qtask run --bg", "<task-notification>", "`/opt/q/qtask wait", "`/opt/q/qtask monitor"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q: %q", want, msg)
		}
	}
	if strings.Contains(msg, "`qtask ") {
		t.Errorf("the refusal names a bare qtask the agent's shell cannot find: %q", msg)
	}
	if msg := CheckSleep("sleep infinity", "qtask").Error(); !strings.Contains(msg, "forever") {
		t.Errorf("sleep infinity: %q", msg)
	}
}

// FuzzCheckSleep: never panics, and a refused command stays refused with
// a comment or another command after it.
func FuzzCheckSleep(f *testing.F) {
	for _, tc := range sleepCases {
		f.Add(tc.cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		err := CheckSleep(cmd, "qtask")
		if err == nil {
			return
		}
		for _, tail := range []string{"\n", " # note", "; true", "\ntrue"} {
			if CheckSleep(cmd+tail, "qtask") == nil {
				t.Errorf("%q is refused but %q is not", cmd, cmd+tail)
			}
		}
	})
}

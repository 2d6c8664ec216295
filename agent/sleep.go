package agent

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks/shellword"
)

// MinRefusedSleep is the shortest leading sleep agent mode refuses: a
// shorter one is a debounce, not a wait.
const MinRefusedSleep = 2 * time.Second

// SleepError refuses a foreground command that begins by sleeping: an agent
// that sleeps to wait for something blocks its own shell tool and learns
// nothing more than a notification would tell it.
type SleepError struct {
	Duration time.Duration // math.MaxInt64 for `sleep infinity`
	// Qtask is how the agent's shell runs qtask: "qtask", or its full
	// path when the agent's PATH does not find it.
	Qtask string
}

func (e *SleepError) Error() string {
	d := "forever"
	if e.Duration < math.MaxInt64 {
		d = "for " + e.Duration.String()
	}
	return fmt.Sprintf("refused: this command starts by sleeping %[1]s, which only blocks your shell. "+
		"To wait for something to finish, start it in the background (`%[3]s run --bg -- COMMAND`, or your "+
		"shell tool's background option): you will be told with a <task-notification> when it ends, or wait "+
		"for it with `%[3]s wait ID`. To wait for a condition, run the check itself in the background "+
		"(`%[3]s run --bg -- 'until CHECK; do sleep 1; done'`); to wait for a line in some output (a server "+
		"saying it is ready, an ERROR), start a monitor (`%[3]s monitor --match REGEX -- COMMAND`, or "+
		"`%[3]s monitor ID --match REGEX` for a running task): each matching line is a notification. "+
		"Sleeps under %[2]s, `sleep N &` and sleeps "+
		"later in a chain are not refused.", d, MinRefusedSleep, e.Qtask)
}

// CheckSleep returns a *SleepError when cmd begins with `sleep N` (N at
// least MinRefusedSleep; units ms, s, m, h, d; several operands add up)
// that is alone or followed by `&&`, `||`, `;` or a newline — a trailing
// comment does not hide it, and `bash -c 'sleep 5'` is looked into. A
// sleep piped into something, sent to the background with `&`, shorter
// than MinRefusedSleep, whose length is not literal (`sleep $N`), or not
// first in the chain is left alone. One linear pass per nesting level.
// qtask is how the agent's shell runs qtask, for the refusal's advice.
func CheckSleep(cmd, qtask string) error {
	if d, ok := leadingSleep(cmd, 0); ok {
		return &SleepError{Duration: d, Qtask: qtask}
	}
	return nil
}

func leadingSleep(cmd string, depth int) (time.Duration, bool) {
	words, op := shellword.FirstCommand(cmd)
	switch op {
	case "", "\n", ";", "&&", "||":
	default:
		return 0, false // piped, backgrounded, redirected or grouped
	}
	if len(words) == 0 || !words[0].Literal {
		return 0, false
	}
	if filepath.Base(words[0].Text) == "sleep" {
		return sleepOperands(words[1:])
	}
	if script, ok := shellword.Script(words); ok && depth < shellword.MaxDepth {
		return leadingSleep(script, depth+1)
	}
	return 0, false
}

// sleepOperands adds up sleep's operands; false when one is not a literal
// duration or the total is short.
func sleepOperands(args []shellword.Word) (time.Duration, bool) {
	if len(args) == 0 {
		return 0, false
	}
	var total float64 // seconds
	for _, a := range args {
		if !a.Literal {
			return 0, false
		}
		secs, ok := parseSleep(a.Text)
		if !ok {
			return 0, false
		}
		total += secs
	}
	if total < MinRefusedSleep.Seconds() {
		return 0, false
	}
	if total >= float64(math.MaxInt64)/float64(time.Second) {
		return math.MaxInt64, true
	}
	return time.Duration(total * float64(time.Second)).Round(time.Millisecond), true
}

// parseSleep reads one operand of sleep in seconds: a non-negative number
// with an optional unit, or "infinity".
func parseSleep(s string) (float64, bool) {
	if s == "inf" || s == "infinity" {
		return math.Inf(1), true
	}
	unit := 1.0
	for _, u := range []struct {
		suffix string
		secs   float64
	}{{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}} {
		if strings.HasSuffix(s, u.suffix) {
			s, unit = strings.TrimSuffix(s, u.suffix), u.secs
			break
		}
	}
	if s == "" || strings.Trim(s, "0123456789.") != "" {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * unit, true
}

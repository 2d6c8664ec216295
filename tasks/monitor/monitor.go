// Package monitor is a monitor, a task whose output lines become event
// notifications, apart from the task store: its rules (the limits, the
// token bucket that throttles events, the cutting of output into event
// lines); the making of its events in its wrapper (events.go), which
// applies the rules to each line as it lands in the output file and counts
// in the store through Store, an interface the tasks package implements on
// the monitor's record; and its events log, the file beside its output
// where each event is kept for people (`qtask events`), written and read
// here (eventlog.go). Nothing here touches a process or knows the task
// store's records, so the rules and the making of events are tested with
// an injected clock and a fake Store, and the log with a temporary
// directory.
package monitor

import (
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"
)

// The limits of a monitor (../../docs and README "Monitors"). An agent
// reads every event in its context window: the caps keep one monitor from
// flooding it, whatever the command prints.
const (
	DefaultMaxEvents = 1000
	MaxEventsCap     = 10000
	DefaultIdle      = 5 * time.Minute
	IdleCap          = 10 * time.Minute
	// MaxRunning is how many monitors may run at once in one scope.
	MaxRunning = 16
	// Burst and Refill shape the token bucket: five events at once, then
	// one a second.
	Burst  = 5
	Refill = time.Second
	// LineMax bounds the line an event quotes, in characters. (A line
	// without an end comes in pieces: see tasks.MaxLineBytes.)
	LineMax = 2000
	// MaxUnread is how many of a monitor's events may wait unread: while
	// that many do, further lines are dropped and counted as the bucket's
	// are. The bucket bounds the rate, not what piles up while nobody
	// reads (an agent in a ten-minute tool call, away between sessions):
	// at one a second that was up to the max events, a thousand, handed
	// to the agent's context in one hook answer.
	MaxUnread = 10
)

// TruncatedMark ends an event line cut at LineMax.
const TruncatedMark = "...[truncated]"

// Options is what a monitor is asked to do; zero values take the defaults.
type Options struct {
	// Match, when set, is an RE2 expression: only lines it matches are
	// events. RE2 runs in linear time, so no line can stall the monitor.
	Match       string
	MaxEvents   int
	IdleTimeout time.Duration
}

// Resolve checks o against the caps and fills in the defaults. Its errors
// name the option and what to do, in one line.
func (o Options) Resolve() (Options, error) {
	if o.Match != "" {
		if _, err := regexp.Compile(o.Match); err != nil {
			return o, fmt.Errorf("match pattern %q is not a valid regular expression: %v", o.Match, err)
		}
	}
	if err := orDefault("max events", &o.MaxEvents, DefaultMaxEvents, MaxEventsCap); err != nil {
		return o, err
	}
	if err := orDefault("idle timeout", &o.IdleTimeout, DefaultIdle, IdleCap); err != nil {
		return o, err
	}
	return o, nil
}

// orDefault checks *v against 0 and limit, and sets 0 to def.
func orDefault[T int | time.Duration](name string, v *T, def, limit T) error {
	switch {
	case *v < 0:
		return fmt.Errorf("%s must not be negative (default %v)", name, def)
	case *v > limit:
		return fmt.Errorf("%s %v is over the cap of %v: ask for less", name, *v, limit)
	case *v == 0:
		*v = def
	}
	return nil
}

// Bucket is a token bucket: it holds at most Burst tokens, gains one per
// Refill, and each event takes one. A line that finds it empty is dropped,
// not queued: an event is about now, and a queue would grow with whatever
// the command prints.
type Bucket struct {
	now    func() time.Time
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket reading time from now (time.Now in use,
// a fake clock in tests).
func NewBucket(now func() time.Time) *Bucket {
	return &Bucket{now: now, tokens: Burst, last: now()}
}

// Take takes a token if there is one, and reports whether it did.
func (b *Bucket) Take() bool {
	t := b.now()
	if t.After(b.last) {
		b.tokens = min(Burst, b.tokens+float64(t.Sub(b.last))/float64(Refill))
		b.last = t
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// EventLine is line as an event quotes it: at most LineMax characters,
// then TruncatedMark if there were more.
func EventLine(line string) string {
	if utf8.RuneCountInString(line) <= LineMax {
		return line
	}
	i := 0
	for n := range line {
		if i == LineMax {
			return line[:n] + TruncatedMark
		}
		i++
	}
	return line
}

// Blank reports a line of only spaces and tabs: it is never an event and
// costs no token.
func Blank(line string) bool {
	for i := 0; i < len(line); i++ {
		if line[i] != ' ' && line[i] != '\t' {
			return false
		}
	}
	return true
}

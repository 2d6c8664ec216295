package monitor

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/capped"
	"github.com/qtask/qtask/tasks/output"
	"github.com/qtask/qtask/tasks/statefs"
)

// The events log: a monitor keeps, besides queueing each event for its
// scope, a line for it in ID.events beside its output file (0600, capped at
// output_max_bytes as the output file is, the newest kept): one JSON object
// a line, its time, count and line. It is for people (`qtask events`),
// who read it as often as they like: the queue's entries are consumed by
// whichever agent reads first, and the record keeps only the count. It is
// best effort, as the raw copy is: an event is delivered whether or not its
// line could be written here.

// logLine is one line of an events log.
type logLine struct {
	Time  time.Time `json:"time"`
	Count int       `json:"count"`
	Line  string    `json:"line"`
}

// EventsPath is the events log of the task whose output file is outputPath.
func EventsPath(outputPath string) string {
	return strings.TrimSuffix(outputPath, ".log") + ".events"
}

// Log is a monitor's writer of its events log; nil: none.
type Log struct{ out *capped.File }

// CreateLog creates the events log of the monitor whose output file is
// outputPath, capped at limit bytes (<= 0: capped.DefaultMaxBytes); nil if
// it cannot.
func CreateLog(outputPath string, limit int64) *Log {
	path := EventsPath(outputPath)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, statefs.FileMode)
	if err != nil {
		return nil
	}
	f.Close()
	if limit <= 0 {
		limit = capped.DefaultMaxBytes
	}
	out, err := capped.Open(path, limit)
	if err != nil {
		return nil
	}
	return &Log{out: out}
}

// Add writes the count-th event, made at, for line.
func (l *Log) Add(at time.Time, count int, line string) {
	if l == nil {
		return
	}
	data, err := json.Marshal(logLine{Time: at.UTC(), Count: count, Line: line})
	if err == nil {
		l.out.Write(append(data, '\n'))
	}
}

// Close closes the log; on nil it does nothing.
func (l *Log) Close() {
	if l != nil {
		l.out.Close()
	}
}

// Event is one event of a monitor: as Events queues it (Time, Count,
// Line), and as its log keeps it and `qtask events` shows it. A line of
// the log that is not an event (the cap's note that older events were
// dropped) comes as Note, at the time of the event before it.
type Event struct {
	Task  string
	Time  time.Time
	Count int
	Line  string
	Note  string
}

// LogReader reads one monitor's events log as it grows.
type LogReader struct {
	task  string
	fl    *output.Follower
	lines *output.LineWriter
	got   []Event
	last  time.Time
}

// ReadLog reads the events log of monitor task, whose output file is
// outputPath, from its start. Close it when done.
func ReadLog(task, outputPath string) *LogReader {
	rd := &LogReader{task: task, fl: output.NewFollower(EventsPath(outputPath), 0)}
	rd.lines = output.NewLineWriter(func(b []byte) error {
		var e logLine
		if err := json.Unmarshal(b, &e); err != nil {
			rd.got = append(rd.got, Event{Task: rd.task, Time: rd.last, Note: string(b)})
			return nil
		}
		rd.last = e.Time
		rd.got = append(rd.got, Event{Task: rd.task, Time: e.Time, Count: e.Count, Line: e.Line})
		return nil
	})
	return rd
}

// Read appends to got the events written since the last read. A monitor
// without a log (from before qtask kept one, or whose log could not be
// made) has none.
func (rd *LogReader) Read(got []Event) ([]Event, error) {
	rd.got = got
	err := rd.fl.CopyNew(rd.lines, false)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return rd.got, err
}

// Close lets go of the log.
func (rd *LogReader) Close() { rd.fl.Close() }

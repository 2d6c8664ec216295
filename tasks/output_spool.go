package tasks

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"
)

const (
	// spoolMax bounds the output a capture holds in memory while its file
	// cannot be written (a full disk, a read-only remount, an I/O error).
	spoolMax = 1 << 20
	// Retries of a failed write back off from spoolRetryMin to spoolRetryMax.
	spoolRetryMin = 20 * time.Millisecond
	spoolRetryMax = time.Second
)

// spool sits between the cleaner and the output file and makes write errors
// transient: output that cannot be written waits in memory (at most
// spoolMax; what comes beyond that is counted and dropped) and is retried
// with backoff. Once the file takes writes again the waiting output goes
// first, then one line saying how much was lost, if anything was:
// `[qtask: N bytes lost: no space left on device]`. Writes to a spool never
// fail. It is not safe for concurrent use.
type spool struct {
	w       io.Writer
	pending []byte
	lost    int64         // bytes dropped since the file last took a write
	why     error         // the error holding output back; nil when flowing
	retryAt time.Time     // when to try the file again
	backoff time.Duration // the wait after the next failure
	// onLoss is told each loss as it is written into the file.
	onLoss func(loss string)
}

func newSpool(w io.Writer, onLoss func(string)) *spool {
	return &spool{w: w, onLoss: onLoss}
}

// Write queues b behind any waiting output and writes what it can.
func (p *spool) Write(b []byte) (int, error) {
	total := len(b)
	p.retry()
	if p.why == nil && len(p.pending) == 0 {
		n, err := p.w.Write(b) // the common case: straight through
		if err == nil {
			return total, nil
		}
		p.failed(err)
		b = b[n:]
	}
	if len(p.pending)+len(b) > spoolMax {
		p.flush() // one more try before anything is dropped
	}
	if len(p.pending)+len(b) > spoolMax {
		// Whole pieces are dropped: the cleaner hands over whole lines.
		p.lost += int64(len(b))
	} else {
		p.pending = append(p.pending, b...)
	}
	return total, nil
}

// failed sets the next retry after a failed write.
func (p *spool) failed(err error) {
	p.backoff = min(max(2*p.backoff, spoolRetryMin), spoolRetryMax)
	p.why, p.retryAt = err, time.Now().Add(p.backoff)
}

// flush writes the waiting output, then the loss note if one is due. On a
// failure it keeps the rest for a retry after the backoff.
func (p *spool) flush() {
	for len(p.pending) > 0 || p.lost > 0 {
		if len(p.pending) == 0 {
			loss := fmt.Sprintf("%d bytes lost: %s", p.lost, errnoText(p.why))
			p.pending = append(p.pending, "[qtask: "+loss+"]\n"...)
			p.lost = 0
			if p.onLoss != nil {
				p.onLoss(loss)
			}
		}
		n, err := p.w.Write(p.pending)
		p.pending = p.pending[:copy(p.pending, p.pending[n:])]
		if err != nil {
			p.failed(err)
			return
		}
	}
	if p.pending = p.pending[:0]; cap(p.pending) > captureChunk {
		p.pending = nil // the memory of a long outage goes back
	}
	p.why, p.backoff = nil, 0
}

// due is when the spool wants to be retried; zero if it does not.
func (p *spool) due() time.Time {
	if p.why == nil {
		return time.Time{}
	}
	return p.retryAt
}

// retry tries the file again if a retry is due.
func (p *spool) retry() {
	if p.why != nil && !time.Now().Before(p.retryAt) {
		p.flush()
	}
}

// drain retries until everything is written or until passes; what is still
// waiting then is lost, and that is returned. blocked, if set, is told why
// the drain is waiting (nil once it is not).
func (p *spool) drain(until time.Time, blocked func(error)) string {
	for p.flush(); p.why != nil && time.Now().Before(until); p.flush() {
		if blocked != nil {
			blocked(p.why)
		}
		time.Sleep(time.Until(p.retryAt))
	}
	if blocked != nil {
		blocked(nil)
	}
	if p.why == nil {
		return ""
	}
	return fmt.Sprintf("the last %d bytes could not be written: %s", int64(len(p.pending))+p.lost, errnoText(p.why))
}

// errnoText names the system error under err ("no space left on device"),
// or err itself when there is none.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

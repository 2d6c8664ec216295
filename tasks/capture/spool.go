package capture

import (
	"bytes"
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

// spool sits between the screen model and the output file and makes write errors
// transient: output that cannot be written waits in memory (at most
// spoolMax; what comes beyond that is counted and dropped) and is retried
// with backoff. Once the file takes writes again the waiting output goes
// first, then one line saying how much was lost, if anything was:
// `[qtask: N bytes lost: no space left on device]`. Losses are cut at line
// ends, so the note stands between whole lines. Writes to a spool never
// fail. It is not safe for concurrent use.
type spool struct {
	w       io.Writer
	pending []byte
	lost    int64 // bytes dropped and not yet noted in the file
	lossWhy error // the error that made them drop
	// cutLine says the last byte dropped was not a newline: the rest of
	// its line is dropped too, before the note is written.
	cutLine bool
	// midLine says the last byte written was not a newline.
	midLine bool
	why     error         // the error holding output back; nil when flowing
	retryAt time.Time     // when to try the file again
	backoff time.Duration // the wait after the next failure
	// onLoss is told each loss as its note is queued for the file.
	onLoss func(loss string)
}

func newSpool(w io.Writer, onLoss func(string)) *spool {
	return &spool{w: w, onLoss: onLoss}
}

// Write queues b behind any waiting output and writes what it can.
func (p *spool) Write(b []byte) (int, error) {
	total := len(b)
	p.retry()
	if p.cutLine {
		b = p.drop(b, bytes.IndexByte(b, '\n')+1)
	}
	if p.flowing() {
		n, err := p.w.Write(b) // the common case: straight through
		p.wrote(b[:n])
		if err == nil {
			return total, nil
		}
		p.failed(err)
		b = b[n:]
	}
	if p.lost > 0 || len(p.pending)+len(b) > spoolMax {
		p.flush() // one more try before anything is dropped
	}
	if p.why != nil && (p.lost > 0 || len(p.pending)+len(b) > spoolMax) {
		if p.lost == 0 {
			// The loss starts at a line end: the waiting partial line goes.
			end := bytes.LastIndexByte(p.pending, '\n') + 1
			p.lost += int64(len(p.pending) - end)
			p.pending = p.pending[:end]
		}
		p.lossWhy = p.why
		p.drop(b, len(b))
		return total, nil
	}
	p.pending = append(p.pending, b...)
	if p.why == nil {
		p.flush()
	}
	return total, nil
}

// drop counts the first n bytes of b as lost (all of b if n is 0: no
// newline to stop at) and returns the rest.
func (p *spool) drop(b []byte, n int) []byte {
	if n == 0 {
		n = len(b)
	}
	if n > 0 {
		p.lost += int64(n)
		p.cutLine = b[n-1] != '\n'
	}
	return b[n:]
}

// wrote notes where writing b left the file: at a line start or not.
func (p *spool) wrote(b []byte) {
	if len(b) > 0 {
		p.midLine = b[len(b)-1] != '\n'
	}
}

// failed sets the next retry after a failed write.
func (p *spool) failed(err error) {
	p.backoff = min(max(2*p.backoff, spoolRetryMin), spoolRetryMax)
	p.why, p.retryAt = err, time.Now().Add(p.backoff)
}

// flush writes the waiting output, then the loss note if one is due (not
// while a cut line's rest may still come). On a failure it keeps the rest
// for a retry after the backoff.
func (p *spool) flush() {
	for len(p.pending) > 0 || p.lost > 0 && !p.cutLine {
		if len(p.pending) == 0 {
			loss := fmt.Sprintf("%d bytes lost: %s", p.lost, errnoText(p.lossWhy))
			if p.midLine {
				p.pending = append(p.pending, '\n')
			}
			p.pending = append(p.pending, "[qtask: "+loss+"]\n"...)
			p.lost = 0
			if p.onLoss != nil {
				p.onLoss(loss)
			}
		}
		n, err := p.w.Write(p.pending)
		p.wrote(p.pending[:n])
		p.pending = p.pending[:copy(p.pending, p.pending[n:])]
		if err != nil {
			p.failed(err)
			return
		}
	}
	if cap(p.pending) > captureChunk {
		p.pending = nil // the memory of a long outage goes back
	}
	p.why, p.backoff = nil, 0
}

// flowing reports whether nothing is waiting: what is written next goes
// straight to the file.
func (p *spool) flowing() bool {
	return p.why == nil && len(p.pending) == 0 && p.lost == 0
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
	p.cutLine = false // the stream has ended: nothing more to cut
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

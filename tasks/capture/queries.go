package capture

import (
	"bytes"
	"strconv"
)

// queryFilter takes the terminal queries out of a pane's raw bytes on
// their way to a caller's terminal (see Display). The program asked tmux,
// and tmux answered it; a copy of the question reaching the caller's own
// terminal is answered too, into the caller's input, where it shows as
// garbage at the shell's next prompt ("^[[?1;2c"). Only questions are
// dropped: device attributes and status reports (CSI c, CSI n), mode,
// window and keyboard reports, ESC Z, ENQ, OSC colour and clipboard
// queries (a parameter that is just "?") and DCS +q/$q requests.
// Everything else passes byte for byte, in order.
//
// A sequence split across writes is held until it is complete. One that
// runs longer than any query does is let through as it is.
type queryFilter struct {
	state queryState
	seq   []byte // the sequence so far, while it may still be a query
}

type queryState int

const (
	qGround    queryState = iota
	qEsc                  // after ESC
	qCSI                  // in a CSI sequence
	qString               // in an OSC or DCS string, deciding
	qPass                 // in a string that is no query: to its end
	qStringEsc            // ESC ending a string: ST or not
)

const (
	// queryCSIMax is longer than any CSI query.
	queryCSIMax = 32
	// queryStringMax is longer than any OSC or DCS query: a string still
	// open at this length is not one.
	queryStringMax = 24
)

// filter returns p without the queries, appended to out; bytes of an
// unfinished sequence are held for the next call.
func (q *queryFilter) filter(out, p []byte) []byte {
	for len(p) > 0 {
		if q.state == qGround {
			i := bytes.IndexAny(p, "\x1b\x05")
			if i < 0 {
				return append(out, p...)
			}
			out = append(out, p[:i]...)
			if p[i] == 0x1b {
				q.state, q.seq = qEsc, append(q.seq[:0], 0x1b)
			} // ENQ: the answerback request, dropped
			p = p[i+1:]
			continue
		}
		c := p[0]
		p = p[1:]
		out = q.step(out, c)
	}
	return out
}

// step advances a sequence by one byte.
func (q *queryFilter) step(out []byte, c byte) []byte {
	switch q.state {
	case qEsc:
		q.seq = append(q.seq, c)
		switch c {
		case '[':
			q.state = qCSI
		case ']', 'P':
			q.state = qString
		case 'Z': // DECID
			q.state = qGround
		case 0x1b: // the first ESC was alone; the second may start a query
			out = append(out, 0x1b)
			q.seq = q.seq[:1]
		default:
			q.state = qGround
			out = append(out, q.seq...)
		}
	case qCSI:
		q.seq = append(q.seq, c)
		switch {
		case c >= 0x40 && c <= 0x7e:
			q.state = qGround
			if !csiQuery(q.seq[2:]) {
				out = append(out, q.seq...)
			}
		case c < 0x20 || c > 0x7e || len(q.seq) > queryCSIMax:
			q.state = qGround
			out = append(out, q.seq...)
		}
	case qString:
		if c == 0x07 || c == 0x1b {
			return q.endString(out, c)
		}
		q.seq = append(q.seq, c)
		if len(q.seq) >= queryStringMax {
			q.state = qPass
			out = append(out, q.seq...)
		}
	case qPass:
		switch c {
		case 0x07:
			q.state = qGround
		case 0x1b:
			q.state, q.seq = qStringEsc, append(q.seq[:0], 0x1b)
			return out
		}
		out = append(out, c)
	case qStringEsc:
		return q.afterStringEsc(out, c)
	}
	return out
}

// endString ends the string in q.seq at c, BEL or ESC (ST, or a new
// sequence): a query is dropped whole, anything else passes with its
// terminator. After an ESC, qStringEsc holds it until the next byte tells
// which it is.
func (q *queryFilter) endString(out []byte, c byte) []byte {
	query := stringQuery(q.seq)
	if !query {
		out = append(out, q.seq...)
	}
	q.seq = q.seq[:0]
	if c == 0x1b {
		q.state = qStringEsc
		if !query {
			q.seq = append(q.seq, 0x1b)
		}
		return out
	}
	q.state = qGround
	if !query {
		out = append(out, c)
	}
	return out
}

// afterStringEsc takes the byte after the ESC that ended a string: with
// '\\' it is the string's ST, passed on if the string was (q.seq then holds
// its ESC; nothing for a query); any other byte means the ESC starts a new
// sequence, which c continues.
func (q *queryFilter) afterStringEsc(out []byte, c byte) []byte {
	q.state = qGround
	if c == '\\' {
		if len(q.seq) > 0 { // a string that passes: its ST too
			out = append(out, 0x1b, '\\')
		}
		return out
	}
	q.state, q.seq = qEsc, append(q.seq[:0], 0x1b)
	return q.step(out, c)
}

// csiQuery reports whether a CSI sequence (without its ESC [) asks the
// terminal for an answer.
func csiQuery(s []byte) bool {
	final := s[len(s)-1]
	body := s[:len(s)-1]
	prefix := byte(0)
	if len(body) > 0 && body[0] >= '<' && body[0] <= '?' {
		prefix, body = body[0], body[1:]
	}
	switch final {
	case 'c', 'n': // DA1/2/3; DSR, CPR
		return true
	case 'p': // DECRQM: CSI [?] Ps $ p
		return bytes.HasSuffix(body, []byte("$"))
	case 'u': // the keyboard protocol's query: CSI ? u
		return prefix == '?'
	case 'q': // XTVERSION: CSI > q
		return prefix == '>'
	case 't': // window reports: CSI 11/13/14/15/16/18/19/20/21 t
		first, _, _ := bytes.Cut(body, []byte(";"))
		n, err := strconv.Atoi(string(first))
		return err == nil && prefix == 0 && (n == 11 || n >= 13 && n <= 16 || n >= 18 && n <= 21)
	}
	return false
}

// stringQuery reports whether the start of an OSC or DCS string (from its
// ESC) asks the terminal for an answer: an OSC with a parameter that is
// just "?" (colours, the clipboard), a DCS +q or $q request.
func stringQuery(s []byte) bool {
	if len(s) < 2 {
		return false
	}
	body := s[2:]
	if s[1] == 'P' {
		return bytes.HasPrefix(body, []byte("+q")) || bytes.HasPrefix(body, []byte("$q"))
	}
	for _, param := range bytes.Split(body, []byte(";")) {
		if string(param) == "?" {
			return true
		}
	}
	return false
}

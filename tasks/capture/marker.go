package capture

import "bytes"

// Bytes that end an OSC sequence, and start one.
const (
	markerBEL = 0x07
	markerESC = 0x1b
)

// newMarkerScan returns a scanner for the OSC whose payload is marker; one
// that never matches if marker is empty or holds control bytes (below 0x20,
// or DEL), which could never end an OSC that way.
func newMarkerScan(marker string) markerScan {
	for i := 0; i < len(marker); i++ {
		if marker[i] < 0x20 || marker[i] == 0x7f {
			return markerScan{}
		}
	}
	if marker == "" {
		return markerScan{}
	}
	return markerScan{pat: []byte("\x1b]" + marker)}
}

// markerScan finds "ESC ] marker" followed by BEL or "ESC \" in a
// stream, independently of the escape parser, so the end marker is seen in
// text and binary mode alike. pat is "ESC ]" + marker; nil disables it.
// The marker has no control bytes, so ESC occurs in pat only at the start,
// which lets a mismatch simply restart.
type markerScan struct {
	pat  []byte
	i    int // bytes matched: of pat, then the terminator's ESC
	done bool
}

// scan returns how much of p comes up to and including the end of the
// marker, and whether the marker ended there; it reports the marker once.
func (m *markerScan) scan(p []byte) (int, bool) {
	if m.pat == nil || m.done {
		return len(p), false
	}
	for k := 0; k < len(p); k++ {
		if m.i == 0 {
			j := bytes.IndexByte(p[k:], markerESC)
			if j < 0 {
				return len(p), false
			}
			k += j
		}
		if m.step(p[k]) {
			m.done = true
			return k + 1, true
		}
	}
	return len(p), false
}

// step advances the match by b and reports whether the marker just ended.
func (m *markerScan) step(b byte) bool {
	switch {
	case m.i < len(m.pat):
		if b == m.pat[m.i] {
			m.i++
			return false
		}
	case m.i == len(m.pat):
		switch b {
		case markerBEL:
			return true
		case markerESC:
			m.i++
			return false
		}
	default:
		if b == '\\' {
			return true
		}
		// That ESC was not ST; it may start the marker again.
		m.i = 1
		return m.step(b)
	}
	m.i = 0
	if b == markerESC {
		m.i = 1
	}
	return false
}

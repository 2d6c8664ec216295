package config

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// The TOML library does not expose where a key was defined, so error
// messages find it by scanning the text. The scan understands just enough
// TOML to do that for the flat files qtask uses: table headers, dotted and
// quoted keys, and values that span lines (multi-line strings and arrays),
// whose contents must not be mistaken for keys. It is only run on text the
// TOML parser has already accepted.

// keyPos is where a key is defined. Lines and columns start at 1; columns
// count characters.
type keyPos struct {
	line   int
	keyCol int // first character of the key
	valCol int // first character of its value; keyCol for tables
}

// locateKeys maps every key defined in text, in toml.Key.String form, to
// where it is first defined. A dotted key or table header also defines its
// parent tables at the same spot.
func locateKeys(text string) map[string]keyPos {
	found := make(map[string]keyPos)
	record := func(path []string, p keyPos) {
		for i := 1; i <= len(path); i++ {
			k := toml.Key(path[:i]).String()
			if _, ok := found[k]; ok {
				continue
			}
			if i < len(path) {
				found[k] = keyPos{line: p.line, keyCol: p.keyCol, valCol: p.keyCol}
			} else {
				found[k] = p
			}
		}
	}

	var (
		table []string // keys of the current [table] header
		sc    valueScanner
	)
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if sc.open() {
			sc.scan(line, 0)
			continue
		}
		start := skipSpace(line, 0)
		if start == len(line) || line[start] == '#' {
			continue
		}
		if line[start] == '[' {
			keyStart := start + 1
			if keyStart < len(line) && line[keyStart] == '[' {
				keyStart++
			}
			keyStart = skipSpace(line, keyStart)
			if path, _ := parseKey(line, keyStart); path != nil {
				table = path
				c := column(line, keyStart)
				record(path, keyPos{line: i + 1, keyCol: c, valCol: c})
			}
			continue
		}
		path, end := parseKey(line, start)
		if path == nil || end >= len(line) || line[end] != '=' {
			continue
		}
		val := skipSpace(line, end+1)
		record(append(slices.Clone(table), path...), keyPos{line: i + 1, keyCol: column(line, start), valCol: column(line, val)})
		sc.scan(line, val)
	}
	return found
}

// valueScanner follows values across lines so that the lines inside a
// multi-line string or array are not read as key definitions.
type valueScanner struct {
	delim string // `"""` or `'''` while inside a multi-line string
	depth int    // number of unclosed '[' in array values
}

// open reports whether a value continues onto the next line.
func (s *valueScanner) open() bool { return s.delim != "" || s.depth > 0 }

// scan consumes value text in line from byte offset i.
func (s *valueScanner) scan(line string, i int) {
	for i < len(line) {
		if s.delim != "" {
			end := closeMultiline(line, i, s.delim)
			if end < 0 {
				return
			}
			s.delim, i = "", end
			continue
		}
		switch c := line[i]; {
		case c == '#':
			return
		case strings.HasPrefix(line[i:], `"""`), strings.HasPrefix(line[i:], `'''`):
			s.delim = line[i : i+3]
			i += 3
		case c == '"' || c == '\'':
			i = skipString(line, i)
		case c == '[':
			s.depth++
			i++
		case c == ']' && s.depth > 0:
			s.depth--
			i++
		default:
			i++
		}
	}
}

// closeMultiline returns the offset just past the delimiter that closes a
// multi-line string, searching line from i, or -1 if it does not close on
// this line. Up to two extra quote characters before the delimiter belong
// to the string's content.
func closeMultiline(line string, i int, delim string) int {
	for i < len(line) {
		if delim[0] == '"' && line[i] == '\\' {
			i += 2
			continue
		}
		if strings.HasPrefix(line[i:], delim) {
			end := i + len(delim)
			for extra := 0; extra < 2 && end < len(line) && line[end] == delim[0]; extra++ {
				end++
			}
			return end
		}
		i++
	}
	return -1
}

// skipString returns the offset just past the single-line string that
// starts with the quote at line[i]. Backslash escapes apply only in
// "-quoted strings.
func skipString(line string, i int) int {
	q := line[i]
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q:
			return j + 1
		}
	}
	return len(line)
}

// parseKey reads a possibly dotted, possibly quoted key starting at
// line[i]. It returns the key's parts and the offset of the first
// non-blank byte after it, or nil if there is no key at i.
func parseKey(line string, i int) ([]string, int) {
	var parts []string
	for {
		i = skipSpace(line, i)
		if i >= len(line) {
			return nil, i
		}
		var part string
		switch line[i] {
		case '"':
			end := skipString(line, i)
			var err error
			if part, err = strconv.Unquote(line[i:end]); err != nil {
				part = line[i+1 : end-1]
			}
			i = end
		case '\'':
			end := skipString(line, i)
			part = line[i+1 : end-1]
			i = end
		default:
			end := i
			for end < len(line) && isBareKeyByte(line[end]) {
				end++
			}
			if end == i {
				return nil, i
			}
			part = line[i:end]
			i = end
		}
		parts = append(parts, part)
		i = skipSpace(line, i)
		if i >= len(line) || line[i] != '.' {
			return parts, i
		}
		i++
	}
}

// isBareKeyByte reports whether b may appear in an unquoted TOML key.
func isBareKeyByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// skipSpace returns the offset of the first byte at or after i that is
// not a space or tab.
func skipSpace(line string, i int) int {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// column converts byte offset i in line to a 1-based character column.
func column(line string, i int) int {
	return utf8.RuneCountInString(line[:i]) + 1
}

// offsetPosition converts a byte offset into text to a 1-based line and
// character column. It returns 0, 0 when the offset is outside text.
func offsetPosition(text string, offset int) (line, col int) {
	if offset < 0 || offset > len(text) {
		return 0, 0
	}
	before := text[:offset]
	lineStart := strings.LastIndexByte(before, '\n') + 1
	return strings.Count(before, "\n") + 1, column(before[lineStart:], len(before)-lineStart)
}

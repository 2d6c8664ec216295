// Package shellword reads shell command lines as sh would, as far as the
// rules that look into a command need, and is the only code in qtask that
// reads shell quoting: the trailing-'&' rule (tasks), the leading-sleep
// rule (agent) and the reader of Claude's shell scripts (agent/route) all
// go through it, so they see through the same quotes and nested shells.
//
// It reads POSIX and bash quoting: '…', "…", $'…', backslashes and
// backslash-newline continuations, comments, $(…), `…`, heredoc bodies
// (<< and <<-), and the script of a nested `bash -c '…'`. It gives the
// words of a simple command with their quotes removed (FirstCommand,
// ReadWord), and where a script's last command starts and whether a bare
// '&' ends it (LastCommand). Each is one linear pass over bytes: no
// recursion, no UTF-8 requirement, and input that is not valid shell still
// gets an answer.
//
// It is not a parser: it builds no syntax tree, checks no grammar, decodes
// no $'…' escapes (such a word is not Literal), and knows nothing of fish
// (its `(cmd)` reads as a subshell, its \' inside single quotes as bash
// reads it) or of zsh-only syntax. mvdan.cc/sh/v3/syntax was measured
// against it and not taken: see docs/ARCHITECTURE.md.
package shellword

import (
	"path/filepath"
	"strings"
)

// MaxDepth bounds how far the rules look into `bash -c '…'` nested in
// `bash -c '…'`; each level is a strictly shorter string.
const MaxDepth = 4

// Script is the script of a command that runs one with a shell's -c
// (`bash -c 'npm run dev &'`, `sh -ec '…'`, `zsh -lc '…'`), and whether
// words are such a command with a literal script.
func Script(words []Word) (string, bool) {
	if len(words) < 3 || !words[0].Literal || !IsShell(filepath.Base(words[0].Text)) || !IsDashC(words[1]) || !words[2].Literal {
		return "", false
	}
	return words[2].Text, true
}

// IsShell reports whether name is a POSIX-like shell that takes -c.
func IsShell(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh":
		return true
	}
	return false
}

// IsDashC reports whether w is -c, alone or among other single-letter
// options (-lc, -ec).
func IsDashC(w Word) bool {
	return w.Literal && len(w.Text) >= 2 && w.Text[0] == '-' && strings.Contains(w.Text, "c") &&
		strings.Trim(w.Text[1:], "abcdefghijklmnopqrstuvwxyz") == ""
}

// Word is one shell word with its quotes removed. Literal is false when
// the shell would not pass Text on as it is: the word holds an expansion
// ($VAR, $(…), `…`, $'…'), an unquoted pattern or brace (*, ?, [, {), or
// begins with an unquoted ~, or a quote in it is left open.
type Word struct {
	Text    string
	Literal bool
}

// FirstCommand reads the words of cmd's first simple command, skipping
// leading blank and comment lines, and the operator that ends it: "" at
// the end, "\n", ";", "&&", "||", "&", "|", or one of "<>()" for what this
// reader does not follow. A comment after the words ends the command as
// its newline does.
func FirstCommand(cmd string) ([]Word, string) {
	var words []Word
	i := 0
	for {
		for i < len(cmd) && (cmd[i] == ' ' || cmd[i] == '\t' || (cmd[i] == '\n' && len(words) == 0)) {
			i++
		}
		if i >= len(cmd) {
			return words, ""
		}
		switch c := cmd[i]; c {
		case '#':
			j := strings.IndexByte(cmd[i:], '\n')
			if j < 0 {
				return words, ""
			}
			if len(words) > 0 {
				return words, "\n"
			}
			i += j + 1
			continue
		case '\n', ';':
			return words, string(c)
		case '&', '|':
			if i+1 < len(cmd) && cmd[i+1] == c {
				return words, string([]byte{c, c})
			}
			return words, string(c)
		case '<', '>', '(', ')':
			return words, string(c)
		case '\\':
			if i+1 < len(cmd) && cmd[i+1] == '\n' {
				i += 2 // a line continuation between words
				continue
			}
		}
		w, rest := ReadWord(cmd[i:])
		words, i = append(words, w), len(cmd)-len(rest)
	}
}

// ReadWord reads the word that s begins with (s starts neither with a
// blank, an operator nor a comment) and returns it with the rest of s,
// from the blank or operator that ends it. An empty s, or one that begins
// with a blank or an operator, gives an empty Word and s itself.
func ReadWord(s string) (Word, string) {
	var b strings.Builder
	w := Word{Literal: !strings.HasPrefix(s, "~")} // ~ is a home directory
	i := 0
	for i < len(s) {
		switch c := s[i]; c {
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
			w.Text = b.String()
			return w, s[i:]
		case '\\':
			switch {
			case i+1 >= len(s):
				b.WriteByte(c) // a backslash at the very end is itself
			case s[i+1] != '\n':
				b.WriteByte(s[i+1])
			}
			i += 2
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 { // unterminated: a syntax error
				j, w.Literal = len(s)-i-1, false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0:
					if s[i+1] != '\n' {
						b.WriteByte(s[i+1])
					}
					i++
				case s[i] == '$' || s[i] == '`':
					w.Literal = false
					b.WriteByte(s[i])
				default:
					b.WriteByte(s[i])
				}
				i++
			}
			if i >= len(s) { // unterminated: a syntax error
				w.Literal = false
			}
			i++
		case '$', '`', '*', '?', '[', '{':
			// An expansion or a pattern: its value (and, for $(…), where
			// the word ends) is the shell's business; the word is marked
			// and read on as is.
			w.Literal = false
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	w.Text = b.String()
	return w, ""
}

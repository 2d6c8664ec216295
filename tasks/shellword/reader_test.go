package shellword

import (
	"reflect"
	"testing"
)

// The callers' tables (the trailing-'&' rule in tasks, the sleep rule in
// agent, Claude's script reader in agent/route) test the rules; these
// test the reader itself: the last command's text and the background
// '&', the first command's words and operator, and a nested shell's -c
// script.

func TestLastCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd, last  string
		background bool
	}{
		{"make", "make", false},
		{"cd web && npm run dev &", "npm run dev &", true},
		{"a; b | c", "c", false},
		{"build 2>&1", "build 2>&1", false},
		{"a |& b", "b", false},
		{"sleep 9 &|", "sleep 9 &|", true},
		{"sleep 9 &! # disowned", "sleep 9 &! # disowned", true},
		{"a&&!b", "!b", false},
		{"echo '&' \"&\" \\&", "echo '&' \"&\" \\&", false},
		{"echo $(printf '&')", "echo $(printf '&')", false},
		{"cat <<EOF\n&\nEOF\n", "cat <<EOF\n&\nEOF\n", false},
		{"echo 'open", "", false}, // an open quote: no last command
	} {
		last, background := LastCommand(tc.cmd)
		if last != tc.last || background != tc.background {
			t.Errorf("LastCommand(%q) = %q, %v; want %q, %v", tc.cmd, last, background, tc.last, tc.background)
		}
	}
}

func TestFirstCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd   string
		words []Word
		op    string
	}{
		{"# note\n  sleep 5 && make", []Word{{"sleep", true}, {"5", true}}, "&&"},
		{`bash -lc 'npm run dev &'; echo`, []Word{{"bash", true}, {"-lc", true}, {"npm run dev &", true}}, ";"},
		{"echo $HOME *.go ~/x", []Word{{"echo", true}, {"$HOME", false}, {"*.go", false}, {"~/x", false}}, ""},
		{"a \\\n b > out", []Word{{"a", true}, {"b", true}}, ">"},
	} {
		words, op := FirstCommand(tc.cmd)
		if !reflect.DeepEqual(words, tc.words) || op != tc.op {
			t.Errorf("FirstCommand(%q) = %+v, %q; want %+v, %q", tc.cmd, words, op, tc.words, tc.op)
		}
	}
}

func TestScript(t *testing.T) {
	for _, tc := range []struct {
		cmd, script string
		ok          bool
	}{
		{`bash -c "npm run dev &"`, "npm run dev &", true},
		{`/bin/sh -ec 'make'`, "make", true},
		{`zsh -lc 'x'`, "x", true},
		{`python -c 'print(1)'`, "", false},
		{`bash -c "$CMD"`, "", false}, // not literal: unknown until run
		{`bash script.sh`, "", false},
	} {
		words, _ := FirstCommand(tc.cmd)
		script, ok := Script(words)
		if script != tc.script || ok != tc.ok {
			t.Errorf("Script(%q) = %q, %v; want %q, %v", tc.cmd, script, ok, tc.script, tc.ok)
		}
	}
}

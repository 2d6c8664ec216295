package tasks

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckCommandAndName(t *testing.T) {
	cases := []struct {
		what, command, name string
		wantErr             string // "" for none
	}{
		{"plain", "make test", "build", ""},
		{"unnamed", "true", "", ""},
		{"name at the limit", "true", strings.Repeat("n", MaxNameBytes), ""},
		{"unicode name", "true", "bäu ✓", ""},
		{"empty command", "", "", "no command given"},
		{"whitespace command", " \t\n ", "", "no command given"},
		{"trailing ampersand", "npm run dev &", "", "ends with a bare '&'"},
		{"trailing ampersand and comment", "sleep 9 & # later", "", "ends with a bare '&'"},
		{"trailing ampersand in a nested shell", `bash -c "npm run dev &"`, "", "ends with a bare '&'"},
		{"and-and", "make && make test", "", ""},
		{"20 KB name", "true", strings.Repeat("n", 20000), "over the limit of 256"},
		{"newline in name", "true", "a\nb", "U+000A"},
		{"escape in name", "true", "a\x1b[31mb", "U+001B"},
		{"C1 CSI in name", "true", "a\u009bb", "U+009B"},
		{"DEL in name", "true", "a\x7fb", "U+007F"},
		{"invalid UTF-8 name", "true", "a\xffb", "not valid UTF-8"},
		{"blank name", "true", "   ", "task name is empty"},
		{"whitespace name", "true", " \t\u00a0", "task name is empty"},
		{"name with spaces around", "true", " build ", ""},
	}
	for _, c := range cases {
		err := CheckCommand(c.command, "")
		if err == nil {
			err = CheckName(c.name)
		}
		var arg *ArgumentError
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: refused: %v", c.what, err)
		case c.wantErr != "" && (!errors.As(err, &arg) || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want an *ArgumentError saying %q", c.what, err, c.wantErr)
		}
	}
}

// TestCheckGivenNameRefusesEmpty: where a name was asked for (--name ""),
// nothing is no name; where none was, "" is an unnamed task.
func TestCheckGivenNameRefusesEmpty(t *testing.T) {
	var arg *ArgumentError
	if err := CheckGivenName(""); !errors.As(err, &arg) || !strings.Contains(err.Error(), "task name is empty") {
		t.Errorf("CheckGivenName(\"\"): %v, want an *ArgumentError saying the name is empty", err)
	}
	if err := CheckGivenName("build"); err != nil {
		t.Errorf("CheckGivenName(\"build\"): %v", err)
	}
	if err := CheckName(""); err != nil {
		t.Errorf("CheckName(\"\") (an unnamed task): %v", err)
	}
}

// TestCheckCommandShowsTheCallersExample: `run` and `monitor` share the
// rule; each shows its own syntax (monitor once showed run's).
func TestCheckCommandShowsTheCallersExample(t *testing.T) {
	for _, example := range []string{"qtask run --bg -- make test", "qtask monitor -- make test"} {
		err := CheckCommand(" ", example)
		if err == nil || !strings.HasSuffix(err.Error(), "put it after --, e.g. "+example) {
			t.Errorf("CheckCommand(\" \", %q): %v, want its example", example, err)
		}
	}
	if err := CheckCommand(" ", ""); err == nil || strings.Contains(err.Error(), "e.g.") {
		t.Errorf("CheckCommand without an example: %v, want no example", err)
	}
}

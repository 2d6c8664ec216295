package tmux

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseIDs(t *testing.T) {
	type parser struct {
		kind  string
		parse func(string) (string, error)
	}
	pane := parser{"pane", func(s string) (string, error) { id, err := ParsePaneID(s); return string(id), err }}
	session := parser{"session", func(s string) (string, error) { id, err := ParseSessionID(s); return string(id), err }}
	window := parser{"window", func(s string) (string, error) { id, err := ParseWindowID(s); return string(id), err }}

	cases := []struct {
		p    parser
		in   string
		want bool
	}{
		{pane, "%0", true},
		{pane, "%12", true},
		{pane, "%4294967295", true},
		{pane, "", false},
		{pane, "%", false},
		{pane, "12", false},
		{pane, "%-1", false},
		{pane, "%+1", false},
		{pane, "%1a", false},
		{pane, "%0x1", false},
		{pane, "%1_0", false},
		{pane, "% 1", false},
		{pane, "%1 ", false},
		{pane, "%1\n", false},
		{pane, "%%1", false},
		{pane, "$1", false},
		{pane, "@1", false},
		{pane, "%4294967296", false}, // beyond tmux's u_int
		{pane, "%١", false},          // non-ASCII digit
		{session, "$0", true},
		{session, "$3", true},
		{session, "", false},
		{session, "$", false},
		{session, "3", false},
		{session, "$x", false},
		{session, "$-3", false},
		{session, "%3", false},
		{session, "@3", false},
		{session, "=qtask", false},
		{window, "@0", true},
		{window, "@7", true},
		{window, "", false},
		{window, "@", false},
		{window, "7", false},
		{window, "@7.1", false},
		{window, "%7", false},
		{window, "$7", false},
		{window, "@1:2", false},
	}
	for _, c := range cases {
		got, err := c.p.parse(c.in)
		switch {
		case c.want && (err != nil || got != c.in):
			t.Errorf("parse %s id %q = (%q, %v), want it accepted unchanged", c.p.kind, c.in, got, err)
		case !c.want && err == nil:
			t.Errorf("parse %s id %q was accepted as %q: qtask would target a bogus tmux %s", c.p.kind, c.in, got, c.p.kind)
		case !c.want && got != "":
			t.Errorf("parse %s id %q returned %q alongside error %v", c.p.kind, c.in, got, err)
		case !c.want && !strings.Contains(err.Error(), "invalid "+c.p.kind+" id "+strconv.Quote(c.in)):
			t.Errorf("parse %s id %q: error %q should say which kind of id and quote the input", c.p.kind, c.in, err)
		}
	}
}

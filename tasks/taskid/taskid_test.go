package taskid

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	ids := []string{"abc12345", "abd00000", "abc19999", "ffffffff", "0a0a0a0a", "abc1"}
	cases := []struct {
		name       string
		prefix     string
		ids        []string
		want       string
		wantErr    error    // ErrNotFound or ErrAmbiguous
		candidates []string // for ErrAmbiguous, in the order the user sees them
	}{
		{name: "full id", prefix: "ffffffff", ids: ids, want: "ffffffff"},
		{name: "unique prefix", prefix: "abd", ids: ids, want: "abd00000"},
		{name: "one-char unique prefix", prefix: "0", ids: ids, want: "0a0a0a0a"},
		{name: "exact beats longer ids sharing it", prefix: "abc1", ids: ids, want: "abc1"},
		{name: "exact beats prefix wherever it sits in the list", prefix: "abc1",
			ids: []string{"abc12345", "abc19999", "abc1"}, want: "abc1"},
		{name: "ambiguous lists sorted candidates", prefix: "abc",
			ids: []string{"abc19999", "abc1", "abc12345"}, wantErr: ErrAmbiguous,
			candidates: []string{"abc1", "abc12345", "abc19999"}},
		{name: "ambiguous one-char prefix", prefix: "a", ids: ids, wantErr: ErrAmbiguous,
			candidates: []string{"abc1", "abc12345", "abc19999", "abd00000"}},
		{name: "not found", prefix: "1234", ids: ids, wantErr: ErrNotFound},
		{name: "no tasks at all", prefix: "abc", ids: nil, wantErr: ErrNotFound},
		{name: "empty prefix is not 'everything'", prefix: "", ids: []string{"abc12345"}, wantErr: ErrNotFound},
		{name: "path traversal", prefix: "../x", ids: []string{"../x", "abc12345"}, wantErr: ErrNotFound},
		{name: "slash", prefix: "ab/c", ids: []string{"ab/c"}, wantErr: ErrNotFound},
		{name: "dot", prefix: ".", ids: []string{".", ".abc"}, wantErr: ErrNotFound},
		{name: "uppercase hex", prefix: "ABC", ids: []string{"abc12345"}, wantErr: ErrNotFound},
		{name: "non-hex letter", prefix: "abg", ids: []string{"abg00000"}, wantErr: ErrNotFound},
		{name: "too long even if a file had that name", prefix: "abc123456",
			ids: []string{"abc123456", "abc12345"}, wantErr: ErrNotFound},
		{name: "NUL byte", prefix: "ab\x00", ids: []string{"ab\x00"}, wantErr: ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Match(c.prefix, c.ids)
			if c.wantErr == nil {
				if err != nil || got != c.want {
					t.Fatalf("qtask resolving %q among %q: got (%q, %v), want %q", c.prefix, c.ids, got, err, c.want)
				}
				return
			}
			if got != "" {
				t.Errorf("resolving %q among %q picked %q, want an error", c.prefix, c.ids, got)
			}
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("resolving %q among %q: error %v, want %v", c.prefix, c.ids, err, c.wantErr)
			}
			switch c.wantErr {
			case ErrNotFound:
				var nf *NotFoundError
				if !errors.As(err, &nf) || nf.ID != c.prefix {
					t.Errorf("not-found error %v does not name what the user typed (%q)", err, c.prefix)
				}
				if errors.Is(err, ErrAmbiguous) {
					t.Errorf("not-found error %v also claims to be ambiguous", err)
				}
			case ErrAmbiguous:
				var amb *AmbiguousError
				if !errors.As(err, &amb) {
					t.Fatalf("error %T is not an *AmbiguousError", err)
				}
				if amb.Prefix != c.prefix || !slices.Equal(amb.Candidates, c.candidates) {
					t.Errorf("ambiguous error lists (%q, %q), want (%q, %q)", amb.Prefix, amb.Candidates, c.prefix, c.candidates)
				}
				if msg := err.Error(); !strings.Contains(msg, strings.Join(c.candidates, ", ")) {
					t.Errorf("user sees %q, which does not list the candidates %q in order", msg, c.candidates)
				}
				if errors.Is(err, ErrNotFound) {
					t.Errorf("ambiguous error %v also claims to be not found", err)
				}
			}
		})
	}
}

func TestMatchDoesNotReorderCallersSlice(t *testing.T) {
	ids := []string{"abc3", "abc1", "abc2"}
	before := slices.Clone(ids)
	if _, err := Match("abc", ids); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("Match: %v, want ambiguous", err)
	}
	if !slices.Equal(ids, before) {
		t.Errorf("Match reordered the caller's ids: %q, was %q", ids, before)
	}
}

func TestValidIDPrefix(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{"0", true},
		{"abcdef01", true},
		{"9f", true},
		{"", false},
		{"abcdef012", false}, // longer than any id
		{"ABCDEF01", false},
		{"abcdefg", false},
		{"../x", false},
		{"..", false},
		{"a/b", false},
		{"a b", false},
		{"ab\n", false},
		{"é", false},
		{"-1", false},
	}
	for _, c := range cases {
		if got := ValidPrefix(c.in); got != c.want {
			t.Errorf("ValidPrefix(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestNewFormat(t *testing.T) {
	hex8 := regexp.MustCompile(`^[0-9a-f]{8}$`)
	first, err := New()
	if err != nil {
		t.Fatal(err)
	}
	distinct := false
	for range 20 {
		id, err := New()
		if err != nil {
			t.Fatal(err)
		}
		if !hex8.MatchString(id) {
			t.Fatalf("new task id %q is not 8 lowercase hex digits", id)
		}
		if !ValidPrefix(id) {
			t.Fatalf("new task id %q cannot be typed back: ValidPrefix rejects it", id)
		}
		if got, err := Match(id, []string{id}); err != nil || got != id {
			t.Fatalf("new task id %q does not resolve to itself: (%q, %v)", id, got, err)
		}
		distinct = distinct || id != first
	}
	if !distinct {
		t.Errorf("21 new task ids were all %q: ids are not random", first)
	}
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"abc", "abc12345,abc19999,abd00000"},
		{"abc1", "abc1,abc12345"},
		{"ffffffff", "ffffffff"},
		{"", "abc12345"},
		{"../x", "../x"},
		{"ABC", "abc12345"},
		{"abc123456", "abc123456"},
		{"a", ""},
		{"0", "0,00,000"},
		{"é", "é"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, prefix, joined string) {
		ids := strings.Split(joined, ",")
		got, err := Match(prefix, ids)
		var hits []string
		for _, id := range ids {
			if strings.HasPrefix(id, prefix) {
				hits = append(hits, id)
			}
		}
		switch {
		case err == nil:
			if !slices.Contains(ids, got) {
				t.Fatalf("Match(%q, %q) = %q, which is not one of the ids", prefix, ids, got)
			}
			if !strings.HasPrefix(got, prefix) {
				t.Fatalf("Match(%q, %q) = %q, which does not start with the prefix", prefix, ids, got)
			}
			if !ValidPrefix(prefix) {
				t.Fatalf("Match accepted invalid prefix %q", prefix)
			}
			if len(hits) > 1 && got != prefix {
				t.Fatalf("Match(%q, %q) = %q although %d ids match and none exactly", prefix, ids, got, len(hits))
			}
		case errors.Is(err, ErrAmbiguous):
			var amb *AmbiguousError
			if !errors.As(err, &amb) || len(amb.Candidates) < 2 || !slices.IsSorted(amb.Candidates) {
				t.Fatalf("Match(%q, %q): bad ambiguous error %#v", prefix, ids, err)
			}
			for _, c := range amb.Candidates {
				if !strings.HasPrefix(c, prefix) || c == prefix {
					t.Fatalf("Match(%q, %q): candidate %q should not be listed", prefix, ids, c)
				}
			}
		case errors.Is(err, ErrNotFound):
			if ValidPrefix(prefix) && len(hits) > 0 {
				t.Fatalf("Match(%q, %q) said not found, but %q match", prefix, ids, hits)
			}
		default:
			t.Fatalf("Match(%q, %q): unexpected error %v", prefix, ids, err)
		}
		if err != nil && got != "" {
			t.Fatalf("Match(%q, %q) returned both %q and error %v", prefix, ids, got, err)
		}
	})
}

// An all-digit id reads as a number to anything that guesses JSON types;
// without the rule about one id in 43 is all digits, so 3,000 ids would
// hold dozens.
func TestNewIsNeverAllDigits(t *testing.T) {
	for range 3000 {
		id, err := New()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.ContainsAny(id, "abcdef") {
			t.Fatalf("new task id %q is all digits: tools that guess JSON types read it as a number", id)
		}
	}
}

// A name means its running task; with none running, the newest of that
// name; with several running, the user must pick (`stop web` must not stop
// one of two webs at random).
func TestMatchName(t *testing.T) {
	cases := []struct {
		name       string
		named      []Named // oldest first
		want       string
		wantErr    error
		candidates []string
	}{
		{name: "none", wantErr: ErrNotFound},
		{name: "one finished", named: []Named{{ID: "aaaa0001"}}, want: "aaaa0001"},
		{name: "newest finished", named: []Named{{ID: "bbbb0002"}, {ID: "aaaa0001"}}, want: "aaaa0001"},
		{name: "running beats newer finished",
			named: []Named{{ID: "bbbb0002", Running: true}, {ID: "aaaa0001"}}, want: "bbbb0002"},
		{name: "several running", named: []Named{{ID: "cccc0003", Running: true}, {ID: "aaaa0001"}, {ID: "bbbb0002", Running: true}},
			wantErr: ErrAmbiguous, candidates: []string{"bbbb0002", "cccc0003"}},
	}
	for _, c := range cases {
		got, err := MatchName("web", c.named)
		if c.wantErr == nil {
			if err != nil || got != c.want {
				t.Errorf("%s: MatchName = %q, %v; want %q", c.name, got, err, c.want)
			}
			continue
		}
		if !errors.Is(err, c.wantErr) {
			t.Errorf("%s: MatchName = %q, %v; want %v", c.name, got, err, c.wantErr)
			continue
		}
		var amb *AmbiguousError
		if errors.As(err, &amb) && (!amb.Name || !slices.Equal(amb.Candidates, c.candidates)) {
			t.Errorf("%s: %v lists %q (name %v), want the running %q sorted, as a name", c.name, err, amb.Candidates, amb.Name, c.candidates)
		}
		if errors.Is(err, ErrNotFound) && !strings.Contains(err.Error(), `"web"`) {
			t.Errorf("%s: %v does not name what was typed", c.name, err)
		}
	}
}

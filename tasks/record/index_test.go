package record

import (
	"strconv"
	"testing"
)

// TestParseIndexNeedsSortedIDs: lookups are binary searches, so an index
// whose ids are out of order or repeated is not used at all.
func TestParseIndexNeedsSortedIDs(t *testing.T) {
	entry := func(id string) string {
		return id + " 1 3 4 5 " + strconv.Itoa(int(indexSum([]byte("{}\n")))) + "\n{}\n"
	}
	for _, tc := range []struct {
		name string
		ids  []string
		want int
	}{
		{"sorted", []string{"0000000a", "0000000b"}, 2},
		{"out of order", []string{"0000000b", "0000000a"}, 0},
		{"repeated", []string{"0000000a", "0000000a"}, 0},
	} {
		index := IndexHeader
		for _, id := range tc.ids {
			index += entry(id)
		}
		idx := ParseIndex([]byte(index))
		if len(idx) != tc.want {
			t.Errorf("%s: parsed %d entries, want %d", tc.name, len(idx), tc.want)
		}
		for _, id := range tc.ids[:tc.want] {
			if e, ok := idx.Find(id); !ok || string(e.Data) != "{}\n" || e.Stamp != (Stamp{1, 3, 4, 5}) {
				t.Errorf("%s: find(%s) = %+v, %v", tc.name, id, e, ok)
			}
		}
	}
}

// TestParseIndexRefusesNumbersOutOfRange: a stamp's numbers are checked
// against what they can be (a size past the end of the index, a time past
// int64, a sign), never wrapped: a wrapped size once sliced out of range
// and crashed every `ls`.
func TestParseIndexRefusesNumbersOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		stamp string
		ok    bool
	}{
		{"18446744073709551615 3 4 5 6", true}, // the largest inode
		{"1 3 9223372036854775807 9223372036854775807 4294967295", true},
		{"18446744073709551616 3 4 5 6", false},
		{"1 9999999999999999999 4 5 6", false},
		{"1 4 4 5 6", false}, // one byte more than the entry has
		{"1 3 9223372036854775808 5 6", false},
		{"1 3 4 5 4294967296", false},
		{"1 3 -4 5 6", false},
		{"1 3 4 +5 6", false},
		{"1 3 4 5", false},
		{"1 3 4 5 6 7", false},
	} {
		idx := ParseIndex([]byte(IndexHeader + "0000000a " + tc.stamp + "\n{}\n"))
		if got := len(idx) == 1; got != tc.ok {
			t.Errorf("stamp %q: parsed %v, want %v", tc.stamp, got, tc.ok)
		}
	}
}

// FuzzParseIndex: whatever the index file holds, parsing it never panics,
// and what it accepts is entries in increasing id order whose bytes are
// exactly as long as their stamps say.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(IndexHeader + "0000000a 1 3 4 5 6\n{}\n0000000b 2 0 4 5 0\n"))
	f.Add([]byte(IndexHeader + "0000000a 1 9999999999999999999 4 5 6\n{}\n"))
	f.Add([]byte(IndexHeader + "0000000a 1 3 4 5\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx := ParseIndex(data)
		for i, e := range idx {
			if int64(len(e.Data)) != e.Stamp.Size || len(e.Text) != len(e.Data) || string(e.Data) != e.Text {
				t.Fatalf("entry %q: %d bytes, %d of text, stamp says %d", e.ID, len(e.Data), len(e.Text), e.Stamp.Size)
			}
			if i > 0 && idx[i-1].ID >= e.ID {
				t.Fatalf("entries %q and %q out of order", idx[i-1].ID, e.ID)
			}
		}
	})
}

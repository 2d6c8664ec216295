package tasks

import (
	"context"
	"errors"
	"regexp"
	"testing"
)

// TestAwaitReadyRefusesAGateThatIsNotOne: a gate is a line or a port;
// neither, both, or a port out of range is the caller's mistake, refused
// before any task is looked up.
func TestAwaitReadyRefusesAGateThatIsNotOne(t *testing.T) {
	s := newTestStore(t)
	for name, opts := range map[string]ReadyOptions{
		"neither":           {},
		"both":              {Pattern: regexp.MustCompile("x"), Port: 8000},
		"port out of range": {Port: 70000},
	} {
		_, err := s.AwaitReady(context.Background(), "abc", opts)
		if !errors.As(err, new(*ArgumentError)) {
			t.Errorf("%s: AwaitReady = %v, want an ArgumentError", name, err)
		}
	}
}

// TestReadyDescribe: messages name what the gate waited for.
func TestReadyDescribe(t *testing.T) {
	if got, want := (ReadyOptions{Pattern: regexp.MustCompile(`Local:\s+http`)}).Describe(), `a line matching "Local:\\s+http"`; got != want {
		t.Errorf("Describe = %s, want %s", got, want)
	}
	if got, want := (ReadyOptions{Port: 5173}).Describe(), "127.0.0.1:5173 to accept a connection"; got != want {
		t.Errorf("Describe = %s, want %s", got, want)
	}
}

package tmux

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
)

// TestDirectMatchesForkedClient runs the same commands over the socket and
// through the tmux client binary on one real server: what a caller gets
// (stdout, stderr, exit) must not depend on which one carried it.
func TestDirectMatchesForkedClient(t *testing.T) {
	server, _, _ := privateServer(t, "qtd")
	if _, _, err := server.StartWindow(context.Background(), WindowSpec{Session: "t", Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"display-message", "-p", "#{session_name} ünï" + fieldSep + "|x"},
		{"display-message", "-p", "#{p-20000:session_name}|#{p-20000:session_name}"}, // output in several messages
		{"list-windows", "-a", "-F", "#{session_name}:#{window_index}"},
		{"show-options", "-gqv", "@qtask-nothing"},
		{"set-option", "-g", "@qtask-direct", "vålue"},
		{"show-options", "-gqv", "@qtask-direct"},
		{"kill-pane", "-t", "%999"},
		{"frobnicate"},
		{"display-message", "-p", "-t", "=nosuch:", "x"},
		{"load-buffer", "-b", "qtd", "-"},
		{"show-buffer", "-b", "qtd"},
		{"list-keys", "-T", "prefix"},
	}
	for _, args := range cases {
		dOut, dErr, dExit := server.direct(context.Background(), func() {}, args)
		if errors.Is(dExit, errNotDirect) {
			t.Fatalf("%.80q: not carried over the socket", args)
		}
		fOut, fErr, fExit := server.fork(context.Background(), args)
		if !bytes.Equal(dOut, fOut) || string(dErr) != string(fErr) || errString(dExit) != errString(fExit) {
			t.Errorf("%.80q:\nsocket: stdout %.80q stderr %q %v\nclient: stdout %.80q stderr %q %v",
				args, dOut, dErr, dExit, fOut, fErr, fExit)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestDirectFallsBackUnsent: no server, or a server of another protocol
// version, and the command is left to the forked client, unsent — so a
// command never runs twice and the client's own errors stay what users see.
func TestDirectFallsBackUnsent(t *testing.T) {
	testenv.NeedProgram(t, "tmux")
	dir := t.TempDir()
	none := NewSocketServer(filepath.Join(dir, "none"))
	if _, _, err := none.direct(context.Background(), func() {}, []string{"list-sessions"}); !errors.Is(err, errNotDirect) {
		t.Errorf("no server: direct = %v, want errNotDirect", err)
	}
	if _, err := none.run(context.Background(), "list-sessions"); !errors.Is(err, ErrNoServer) {
		t.Errorf("no server: run = %v, want ErrNoServer in the client's words", err)
	}

	sock := filepath.Join(dir, "other")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	commands := make(chan int, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// Answer the first message as a server of another version does,
		// then count the commands that arrive anyway.
		hdr := make([]byte, imsgHeaderSize)
		if _, err := c.Read(hdr); err != nil {
			return
		}
		c.Write(appendMsg(nil, msgVersion, nil))
		rest, _ := readAll(c)
		commands <- bytes.Count(rest, binary.NativeEndian.AppendUint32(nil, msgCommand))
	}()
	other := NewSocketServer(sock)
	if _, _, err := other.direct(context.Background(), func() {}, []string{"list-sessions"}); !errors.Is(err, errNotDirect) {
		t.Errorf("version mismatch: direct = %v, want errNotDirect", err)
	}
	ln.Close()
	if n := <-commands; n != 1 {
		t.Errorf("the command was sent %d times, want once (it is never re-sent over the socket)", n)
	}
}

func readAll(c net.Conn) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(c)
	return b.Bytes(), err
}

// TestRunMeanwhileOnceOnAVersionMismatch: a server of another protocol
// version answers only after the command was sent, when the work meant to
// overlap it has run; the forked client that then runs the command must
// not run that work again.
func TestRunMeanwhileOnceOnAVersionMismatch(t *testing.T) {
	testenv.NeedProgram(t, "tmux")
	sock := filepath.Join(t.TempDir(), "other")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		// One connection only: the forked client must find no server.
		ln.Close()
		defer c.Close()
		hdr := make([]byte, imsgHeaderSize)
		if _, err := c.Read(hdr); err == nil {
			c.Write(appendMsg(nil, msgVersion, nil))
		}
	}()
	calls := 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	NewSocketServer(sock).runMeanwhile(ctx, func() { calls++ }, "list-sessions")
	if calls != 1 {
		t.Fatalf("meanwhile ran %d times across the socket and the forked client, want once", calls)
	}
}

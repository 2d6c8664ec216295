package tmux

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
		if _, err := io.ReadFull(c, hdr); err != nil {
			return
		}
		c.Write(appendMsg(nil, msgVersion, nil))
		rest, _ := readAll(c)
		sent := 0
		for _, typ := range messageTypes(append(hdr, rest...)) {
			if typ == msgCommand {
				sent++
			}
		}
		commands <- sent
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

// messageTypes splits what a client sent into its imsgs and returns their
// types in order. Counting the type's bytes anywhere in the stream instead
// also counted any header whose length and flags, or pid, read the same:
// a message of 200 bytes (an environment variable of 183 characters), or a
// client of pid 200 (in a fresh pid namespace).
func messageTypes(stream []byte) []uint32 {
	var types []uint32
	for len(stream) >= imsgHeaderSize {
		n := int(binary.NativeEndian.Uint16(stream[4:]))
		if n < imsgHeaderSize || n > len(stream) {
			break
		}
		types = append(types, binary.NativeEndian.Uint32(stream))
		stream = stream[n:]
	}
	return types
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

// A server's answer that fills the read buffer to its last byte, message
// after message, and goes on: every message arrives, none is waited for
// in vain (a buffer consumed to its end once left no room to read into).
func TestConversationReadsAnswersLongerThanItsBuffer(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, server := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "server")
	defer ours.Close()
	defer server.Close()
	// Messages of 64 bytes: 64 of them fill a 4096-byte buffer exactly.
	payload := append([]byte{1, 0, 0, 0}, bytes.Repeat([]byte("x"), 64-imsgHeaderSize-4)...)
	var stream []byte
	const messages = 300
	for range messages {
		stream = appendMsg(stream, msgWrite, payload)
	}
	stream = appendMsg(stream, msgExit, []byte{0, 0, 0, 0})
	go func() {
		for len(stream) > 0 { // a message at a time, as the server writes
			n := min(64, len(stream))
			server.Write(stream[:n])
			stream = stream[n:]
		}
	}()
	c := &conversation{f: ours}
	done := make(chan error, 1)
	go func() { done <- c.converse() }()
	select {
	case err := <-done:
		if err != nil || len(c.stdout) != messages*(64-imsgHeaderSize-4) {
			t.Errorf("converse: %v, %d bytes of stdout; want nil and %d", err, len(c.stdout), messages*(64-imsgHeaderSize-4))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("converse still waiting 10 s after the server's exit message")
	}
}

// The caller's deadline still bounds a command over the socket when it
// comes before the server's own answer deadline, and is reported as the
// caller's, not as a silent server: the answer deadline, renewed as the
// server speaks, must never push the caller's back.
func TestDirectKeepsTheCallersDeadline(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "silent")
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
		defer c.Close()
		// One message of output, then nothing.
		c.Write(appendMsg(nil, msgWrite, append([]byte{1, 0, 0, 0}, "x"...)))
		io.Copy(io.Discard, c)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = NewSocketServer(sock).direct(ctx, func() {}, []string{"list-sessions"})
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(*NoAnswerError)) {
		t.Errorf("direct = %v, want the caller's deadline", err)
	}
	if took := time.Since(start); took > answerTimeout/2 {
		t.Errorf("direct took %s under a deadline of 200ms", took)
	}
}

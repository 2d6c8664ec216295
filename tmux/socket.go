package tmux

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// This file speaks tmux's client protocol to a running server directly, so
// a command costs one socket round trip instead of a forked `tmux` client:
// the client binary is dynamically linked and starts its own event loop,
// about a third of a task start (bench/run-bg.sh). It sends exactly what
// `tmux -u -S path CMD…` sends (tmux 3.3a, client.c client_send_identify:
// flags, term, tty name, cwd, pid, environment, then the command's argv)
// and collects what the server writes to the client's stdout and stderr.
//
// Anything that is not this protocol version, or a server that is not
// there, falls back to the forked client before the command was sent
// (errNotDirect), so the client's own behaviour (starting a server, its
// error messages) stays the reference. Once the command is sent, its
// outcome is final: a command is never run twice.

// errNotDirect: the command was not sent; run it with the forked client.
var errNotDirect = errors.New("tmux: no direct connection")

// tmux's protocol (tmux-protocol.h). The server answers any other version
// with msgVersion and runs nothing.
const (
	protocolVersion = 8
	imsgHeaderSize  = 16    // type u32, len u16, flags u16, peerid u32, pid u32
	maxIMsgSize     = 16384 // MAX_IMSGSIZE, header included

	msgVersion           = 12
	msgIdentifyFlags     = 100
	msgIdentifyTerm      = 101
	msgIdentifyTTYName   = 102
	msgIdentifyStdin     = 104
	msgIdentifyEnviron   = 105
	msgIdentifyDone      = 106
	msgIdentifyClientPID = 107
	msgIdentifyCWD       = 108
	msgIdentifyFeatures  = 109
	msgIdentifyStdout    = 110
	msgIdentifyLongFlags = 111
	msgCommand           = 200
	msgDetach            = 201
	msgDetachKill        = 202
	msgExit              = 203
	msgExited            = 204
	msgExiting           = 205
	msgShutdown          = 210
	msgReadOpen          = 300
	msgReadDone          = 302
	msgWriteOpen         = 303
	msgWrite             = 304
	msgWriteReady        = 305

	// clientUTF8 is what -u sets (CLIENT_UTF8): the server sends UTF-8
	// whatever the locale, as every forked call of ours asks with -u.
	clientUTF8 = 0x10000
)

// listenPath is where the server listens, "" when only its -L name is
// known (a record written by another version): that one is forked.
func (s Server) listenPath() string {
	if s.socketPath != "" {
		return s.socketPath
	}
	return s.namedPath
}

// direct runs one command (args, as after `tmux -u -S path`) over the
// server's socket and returns what tmux would have printed on stdout and
// stderr and its exit status as an error (nil for 0). Once the command is
// sent, meanwhile runs before the answer is read.
//
// A server that takes no connection, or goes answerTimeout without a word
// for a command, is a *NoAnswerError: a stopped or hung server, or a
// listener that is not tmux, must not hang qtask. Every command qtask sends
// is answered in milliseconds (none waits: no wait-for, no run-shell).
func (s Server) direct(ctx context.Context, meanwhile func(), args []string) (stdout, stderr []byte, err error) {
	path := s.listenPath()
	if path == "" {
		return nil, nil, errNotDirect
	}
	hello, err := identify(args)
	if err != nil {
		return nil, nil, errNotDirect
	}
	f, pid, err := dial(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// The answer's deadline moves on with every message of it; a
	// cancelled ctx moves it to the past (and keeps it there).
	renew := func() {
		f.SetDeadline(soon(ctx, answerTimeout))
		if ctx.Err() != nil {
			f.SetDeadline(time.Unix(1, 0))
		}
	}
	renew()
	stop := context.AfterFunc(ctx, func() { f.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	// silent is what a failed read or write means when ctx ended or the
	// server said nothing in time; any other err is returned as it is.
	silent := func(err error) error {
		if ctxErr := expired(ctx); ctxErr != nil {
			return ctxErr
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &NoAnswerError{Path: path, Connected: true, PID: pid, After: answerTimeout}
		}
		return err
	}
	if _, err := f.Write(hello); err != nil {
		if stuck := silent(err); stuck != err {
			return nil, nil, stuck
		}
		return nil, nil, errNotDirect // the server closed before reading: nothing ran
	}
	meanwhile()
	c := &conversation{f: f, renew: renew}
	err = c.converse()
	if err != nil {
		err = silent(err)
	}
	return c.stdout, c.stderr, err
}

// How long a server may take to accept a connection, and to say anything
// while it runs a command.
const (
	connectTimeout = 5 * time.Second
	answerTimeout  = 5 * time.Second
)

// expired is ctx's error, or DeadlineExceeded once its deadline has
// passed even if its timer has not fired yet: a deadline of ours that
// ctx's cut short is ctx's doing, not the server's.
func expired(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// soon is d from now, or ctx's deadline if that comes first.
func soon(ctx context.Context, d time.Duration) time.Time {
	t := time.Now().Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.Before(t) {
		return dl
	}
	return t
}

// NoAnswerError is a server that did not take qtask's connection, or did
// not answer a command, in time.
type NoAnswerError struct {
	Path      string
	Connected bool // the connection was taken (and the command sent)
	PID       int  // the listener's, if it was connected and in our pid namespace
	After     time.Duration
}

func (e *NoAnswerError) Error() string {
	if !e.Connected || e.PID == 0 {
		what := "took no connection"
		if e.Connected {
			what = "did not answer"
		}
		return fmt.Sprintf("tmux server on %s %s for %s: it is stopped or hung (ss -xlp src %s names it)", e.Path, what, e.After, e.Path)
	}
	return fmt.Sprintf("tmux server on %s (pid %d) did not answer for %s: it is stopped (kill -CONT %d) or hung (kill %d)",
		e.Path, e.PID, e.After, e.PID, e.PID)
}

// dial connects to the server's socket and checks who listens on it; pid
// is the listener's. A blocking connect, as tmux's client does (a server
// with a full backlog is waited for, not refused), bounded by a send
// timeout, which is what bounds a blocking connect of a unix socket. The
// connected socket is then handed to Go's poller so reads honour deadlines.
// Only a server that is not there (or not reachable) is errNotDirect, for
// the forked client to start or to report.
func dial(ctx context.Context, path string) (f *os.File, pid int, err error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, 0, errNotDirect
	}
	defer func() {
		if err != nil {
			unix.Close(fd)
		}
	}()
	deadline := soon(ctx, connectTimeout)
	for {
		wait := time.Until(deadline)
		if wait <= 0 {
			err = unix.EAGAIN
		} else {
			tv := unix.NsecToTimeval(wait.Nanoseconds())
			if err = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err == nil {
				err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
			}
		}
		if err != unix.EINTR { // a signal cuts a timed connect short: go on waiting
			break
		}
	}
	switch {
	case err == unix.EAGAIN && expired(ctx) != nil:
		return nil, 0, expired(ctx)
	case err == unix.EAGAIN:
		return nil, 0, &NoAnswerError{Path: path, After: connectTimeout}
	case err != nil:
		return nil, 0, errNotDirect
	}
	if pid, err = checkPeer(fd, path); err != nil {
		return nil, 0, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, 0, errNotDirect
	}
	return os.NewFile(uintptr(fd), path), pid, nil
}

// identify is the whole of what the client sends, as one write: the
// identify messages of client.c and the command.
func identify(args []string) ([]byte, error) {
	var argv []byte
	for _, a := range args {
		argv = append(argv, a...)
		argv = append(argv, 0)
	}
	if imsgHeaderSize+4+len(argv) > maxIMsgSize {
		return nil, errors.New("command too long") // the forked client says so
	}
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "/"
	}
	var b []byte
	b = appendMsg(b, msgIdentifyFlags, binary.NativeEndian.AppendUint32(nil, clientUTF8))
	b = appendMsg(b, msgIdentifyLongFlags, binary.NativeEndian.AppendUint64(nil, clientUTF8))
	b = appendMsg(b, msgIdentifyTerm, cstring(os.Getenv("TERM")))
	b = appendMsg(b, msgIdentifyFeatures, binary.NativeEndian.AppendUint32(nil, 0))
	// Our stdin is no terminal to the server: an empty tty name and no
	// descriptors, as a forked client with stdin on /dev/null ends up.
	b = appendMsg(b, msgIdentifyTTYName, cstring(""))
	b = appendMsg(b, msgIdentifyCWD, cstring(cwd))
	b = appendMsg(b, msgIdentifyStdin, nil)
	b = appendMsg(b, msgIdentifyStdout, nil)
	b = appendMsg(b, msgIdentifyClientPID, binary.NativeEndian.AppendUint32(nil, uint32(os.Getpid())))
	for _, kv := range os.Environ() {
		if imsgHeaderSize+len(kv)+1 <= maxIMsgSize {
			b = appendMsg(b, msgIdentifyEnviron, cstring(kv))
		}
	}
	b = appendMsg(b, msgIdentifyDone, nil)
	cmd := binary.NativeEndian.AppendUint32(nil, uint32(len(args)))
	return appendMsg(b, msgCommand, append(cmd, argv...)), nil
}

func cstring(s string) []byte { return append([]byte(s), 0) }

// appendMsg appends one imsg: the header, with our protocol version in
// peerid as tmux's proc_send puts it, then the payload.
func appendMsg(b []byte, typ uint32, payload []byte) []byte {
	b = binary.NativeEndian.AppendUint32(b, typ)
	b = binary.NativeEndian.AppendUint16(b, uint16(imsgHeaderSize+len(payload)))
	b = binary.NativeEndian.AppendUint16(b, 0)
	b = binary.NativeEndian.AppendUint32(b, protocolVersion)
	b = binary.NativeEndian.AppendUint32(b, uint32(os.Getpid()))
	return append(b, payload...)
}

// conversation is the client's side after the command was sent: the
// server opens the client's stdout and stderr as streams, writes to them
// and finally says how the command exited.
type conversation struct {
	f              *os.File
	stdout, stderr []byte
	renew          func() // moves the read deadline on, after each read; nil: no deadline
}

// exitStatus is a non-zero exit of the command, worded as a forked
// client's exit would be.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// converseBuffer is how much of the server's answer one read takes; the
// buffer grows for a longer message. On the heap, not the stack: a caller's
// goroutine starts with a few kilobytes of stack, and a frame this size
// would have it grown (allocated afresh and copied) twice per call.
var converseBuffer = 4096

func (c *conversation) converse() error {
	buf := make([]byte, 0, converseBuffer)
	for {
		for len(buf) >= imsgHeaderSize {
			n := int(binary.NativeEndian.Uint16(buf[4:]))
			if n < imsgHeaderSize {
				return errors.New("tmux: malformed message from the server")
			}
			if len(buf) < n {
				break
			}
			typ := binary.NativeEndian.Uint32(buf)
			done, err := c.handle(typ, buf[imsgHeaderSize:n])
			if done || err != nil {
				return err
			}
			buf = buf[n:]
		}
		if cap(buf)-len(buf) < converseBuffer/4 {
			// Consumed messages leave the buffer's tail: move what is
			// left to a fresh one, twice as large if it is that full.
			buf = append(make([]byte, 0, max(2*len(buf), converseBuffer)), buf...)
		}
		n, err := c.f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n > 0 && c.renew != nil {
			c.renew()
		}
		if err == io.EOF || errors.Is(err, unix.ECONNRESET) {
			// The server went away (it exits with its last session), as
			// the forked client says it.
			c.stderr = append(c.stderr, "server exited unexpectedly\n"...)
			return exitStatus(1)
		}
		if err != nil {
			return err
		}
	}
}

// handle acts on one message from the server; done once the command's
// outcome is known.
func (c *conversation) handle(typ uint32, data []byte) (done bool, err error) {
	switch typ {
	case msgVersion:
		return true, errNotDirect // nothing was run
	case msgExit:
		code := 0
		if len(data) >= 4 {
			code = int(int32(binary.NativeEndian.Uint32(data)))
		}
		if len(data) > 4 {
			msg := data[4:]
			if i := bytes.IndexByte(msg, 0); i >= 0 {
				msg = msg[:i]
			}
			c.stderr = append(append(c.stderr, msg...), '\n')
		}
		if code != 0 {
			return true, exitStatus(code)
		}
		return true, nil
	case msgShutdown, msgExited:
		return true, nil
	case msgDetach, msgDetachKill:
		return false, c.send(msgExiting, nil)
	case msgWriteOpen:
		if len(data) < 12 {
			return true, errors.New("tmux: malformed write-open from the server")
		}
		stream := binary.NativeEndian.Uint32(data)
		fd := int32(binary.NativeEndian.Uint32(data[4:]))
		errno := uint32(0)
		if fd != 1 && fd != 2 || len(data) > 12 {
			errno = uint32(unix.EBADF) // a file by path: not ours to write
		}
		reply := binary.NativeEndian.AppendUint32(nil, stream)
		return false, c.send(msgWriteReady, binary.NativeEndian.AppendUint32(reply, errno))
	case msgWrite:
		if len(data) < 4 {
			return true, errors.New("tmux: malformed write from the server")
		}
		switch binary.NativeEndian.Uint32(data) {
		case 1:
			c.stdout = append(c.stdout, data[4:]...)
		case 2:
			c.stderr = append(c.stderr, data[4:]...)
		}
	case msgReadOpen:
		// Our stdin is /dev/null, as a forked client's: read to its end at once.
		if len(data) < 4 {
			return true, errors.New("tmux: malformed read-open from the server")
		}
		reply := append(data[:4:4], 0, 0, 0, 0)
		return false, c.send(msgReadDone, reply)
	}
	return false, nil
}

func (c *conversation) send(typ uint32, payload []byte) error {
	_, err := c.f.Write(appendMsg(nil, typ, payload))
	return err
}

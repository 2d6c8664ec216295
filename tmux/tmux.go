// Package tmux is the only code in qtask that runs the tmux binary.
//
// Everything goes through one exec seam (Server.run) that passes arguments as
// argv, never as a string built from user text, and turns a failure into an
// *Error carrying tmux's own stderr. tmux still parses some arguments itself
// (a trailing ";" ends a command; -n, -c and -s are expanded as formats, so
// "#(…)" would run a command): user text goes through literalArg/formatArg.
// Above the seam sit the few domain verbs the rest of qtask needs, addressed
// by typed ids: tmux prefix-matches bare names ("qtask-1" finds "qtask-10"),
// so nothing here targets by bare name.
package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/GianlucaP106/gotmux/gotmux"
	"golang.org/x/sys/unix"
)

// DefaultSocketName is the private server qtask starts (tmux -L qtask) when it
// is neither told a socket nor called from inside tmux.
const DefaultSocketName = "qtask"

// Sentinel errors, matched with errors.Is against an *Error.
var (
	// ErrNotInstalled means no tmux binary is on PATH.
	ErrNotInstalled = errors.New("tmux is not installed (install it, e.g. apt-get install tmux)")
	// ErrNoServer means the selected server is not running.
	ErrNoServer = errors.New("tmux server not running")
	// ErrNotFound means the session, window or pane named by a target does not exist.
	ErrNotFound = errors.New("tmux target not found")
	// ErrDuplicateSession means new-session lost a race to create the same name.
	ErrDuplicateSession = errors.New("tmux session already exists")
)

// Error is a failed tmux invocation: the command that ran and what tmux said.
// Args are the command's arguments without the server selector (the socket
// path is noise to a user and the same for every call).
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

// Error is the short form users see: the tmux command's name and tmux's own
// reason ("tmux kill-pane: can't find pane: %9"), never the whole argv,
// which repeats the user's command and socket path.
func (e *Error) Error() string {
	verb := "command"
	if len(e.Args) > 0 {
		verb = e.Args[0]
	}
	return fmt.Sprintf("tmux %s: %s", verb, e.Reason())
}

// Reason is why tmux failed, in tmux's words when it gave any.
func (e *Error) Reason() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is classifies the failure by tmux's stderr, which is the only place tmux
// says why it failed (its exit status is always 1).
func (e *Error) Is(target error) bool {
	s := e.Stderr
	switch target {
	case ErrNoServer:
		// "server exited unexpectedly": the server was shutting down (its
		// last window closed) as we connected; a new one can be started.
		return strings.Contains(s, "no server running") || strings.Contains(s, "error connecting to") ||
			strings.Contains(s, "server exited unexpectedly")
	case ErrNotFound:
		// "no current target": the session exists but is still being
		// created or destroyed by another client.
		return strings.Contains(s, "can't find") || strings.Contains(s, "no such") ||
			strings.Contains(s, "no current target")
	case ErrDuplicateSession:
		return strings.Contains(s, "duplicate session")
	}
	return false
}

// Server addresses one tmux server. The zero value is not usable; build one
// with SelectServer or NewSocketServer.
type Server struct {
	socketPath string // -S
	socketName string // -L, when socketPath is empty
	// namedPath is where the -L server listens, so that String names a
	// server the same way whether it was reached by name or by path.
	namedPath string
}

// NewSocketServer addresses the server listening on an explicit socket path.
func NewSocketServer(path string) Server { return Server{socketPath: path} }

// SelectServer applies qtask's server rule: an explicit socket path wins, then
// the server the caller is inside ($TMUX's socket), then the private
// `-L qtask` server, which is started on demand by the first task. tmpdir is
// $TMUX_TMPDIR, where -L servers listen.
func SelectServer(explicitSocket, insideSocket, tmpdir string) Server {
	switch {
	case explicitSocket != "":
		return Server{socketPath: explicitSocket}
	case insideSocket != "":
		return Server{socketPath: insideSocket}
	default:
		return Server{socketName: DefaultSocketName, namedPath: namedSocketPath(tmpdir, DefaultSocketName)}
	}
}

// namedSocketPath is where tmux puts the socket of `tmux -L name`: the real
// path of $TMUX_TMPDIR (or /tmp) + /tmux-UID/name, as $TMUX reports it.
// tmux-UID itself is not resolved: tmux refuses it if it is a symlink, and
// so does checkSocket.
func namedSocketPath(tmpdir, name string) string {
	if tmpdir == "" {
		tmpdir = "/tmp"
	}
	if real, err := filepath.EvalSymlinks(tmpdir); err == nil {
		tmpdir = real
	}
	return filepath.Join(tmpdir, fmt.Sprintf("tmux-%d", os.Getuid()), name)
}

// String identifies the server by its socket path ("-S /tmp/tmux-0/qtask"),
// however it is reached: the private server is the same one whether a task
// was started outside tmux (by name) or inside it (via $TMUX). Records
// store it; ParseServer reads it back.
func (s Server) String() string {
	switch {
	case s.socketPath != "":
		return "-S " + s.socketPath
	case s.namedPath != "":
		return "-S " + s.namedPath
	}
	return "-L " + s.socketName
}

// Incarnation names this run of the server: its socket's inode and change
// time. A server started again on the same path makes a new socket, and so
// another incarnation; so does tmux's own chmod of the socket as clients
// attach and detach (an incarnation changing without a restart is harmless
// to whoever compares them). "" if the socket cannot be read (no server, or
// one reached by -L name alone).
func (s Server) Incarnation() string {
	path := s.socketPath
	if path == "" {
		path = s.namedPath
	}
	var st unix.Stat_t
	if path == "" || unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return ""
	}
	return fmt.Sprintf("%d %d.%09d", st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}

// Same reports whether s and o are one server, however each was reached
// (by -L name or by socket path).
func (s Server) Same(o Server) bool { return s.String() == o.String() }

// Args is the tmux flag that selects this server, for commands a user types
// (shown in help text such as "tmux -L qtask attach").
func (s Server) Args() []string {
	if s.socketPath != "" {
		return []string{"-S", s.socketPath}
	}
	return []string{"-L", s.socketName}
}

// run is the exec seam: tmux with this server's selector and args as argv,
// over the server's socket when it is up (direct), else by the tmux client.
//
// -u tells tmux the client speaks UTF-8 whatever the locale: without it and
// without a UTF-8 LANG (a bare container, env -i), tmux 3.3a rewrites every
// non-ASCII byte of its output to "_" and mangles non-ASCII names we pass.
//
// tmux can exit 0 yet fail before running the command at all ("error
// creating /missing/dir/sock" when the socket directory does not exist):
// stderr with no output is a failure, with tmux's reason.
func (s Server) run(ctx context.Context, args ...string) (string, error) {
	return s.runMeanwhile(ctx, func() {}, args...)
}

// runMeanwhile is run that calls meanwhile exactly once, while the server
// works on the command: once it is sent over the socket, or before the
// forked client starts (no overlap then: the first start of a server, a
// server of another protocol version). Only the forked client needs tmux
// on PATH: a running server is spoken to without looking for it.
func (s Server) runMeanwhile(ctx context.Context, meanwhile func(), args ...string) (string, error) {
	// A server of another version answers after the command was sent (and
	// meanwhile ran): the forked client then runs it.
	meanwhile = sync.OnceFunc(meanwhile)
	defer meanwhile()
	// Checked for the forked client too: for -S it checks nothing.
	if path := s.listenPath(); path != "" {
		if err := checkSocket(path); err != nil {
			return "", err
		}
	}
	stdout, stderr, err := s.direct(ctx, meanwhile, args)
	if errors.As(err, new(*UnsafeSocketError)) || errors.As(err, new(*NoAnswerError)) {
		return "", err // a line of its own, not tmux's
	}
	if errors.Is(err, errNotDirect) {
		if !installed() {
			return "", ErrNotInstalled
		}
		meanwhile()
		stdout, stderr, err = s.fork(ctx, args)
	}
	if err == nil && len(stdout) == 0 && len(bytes.TrimSpace(stderr)) != 0 {
		err = errors.New("tmux printed an error")
	}
	if err != nil {
		return "", &Error{Args: args, Stderr: string(stderr), Err: err}
	}
	return strings.TrimRight(string(stdout), "\n"), nil
}

// fork runs the tmux client binary: for a server that is not running yet
// (the client starts it), and whatever the socket cannot carry (direct).
func (s Server) fork(ctx context.Context, args []string) (stdout, stderr []byte, err error) {
	argv := append(append([]string{"-u"}, s.Args()...), args...)
	cmd := exec.CommandContext(ctx, "tmux", argv...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// installed asks gotmux whether tmux is on PATH, once per process; it is one of
// the few gotmux calls that is safe (it runs nothing and parses nothing).
var installed = sync.OnceValue(func() (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return gotmux.IsInstalled()
})

// MarshalText writes the server as String does, so a record can hold a
// Server and not a string every reader re-parses.
func (s Server) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what MarshalText wrote (see ParseServer).
func (s *Server) UnmarshalText(text []byte) error {
	parsed, err := ParseServer(string(text))
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// ParseServer is the inverse of Server.String, for servers recorded on disk.
func ParseServer(s string) (Server, error) {
	switch {
	case strings.HasPrefix(s, "-S ") && len(s) > 3:
		return Server{socketPath: s[3:]}, nil
	case strings.HasPrefix(s, "-L ") && len(s) > 3:
		return Server{socketName: s[3:]}, nil
	}
	return Server{}, fmt.Errorf("tmux: unrecognised server %q", s)
}

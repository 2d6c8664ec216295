package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where ServeHTTP answers MCP's streamable HTTP.
const HTTPPath = "/mcp"

// SocketName is the unix socket `qtask mcp --unix` serves on, in the state
// directory.
const SocketName = "mcp.sock"

// ServeHTTP serves s as MCP streamable HTTP on ln at HTTPPath until ctx
// ends. With a token, a request must carry it as "Authorization: Bearer
// TOKEN" or gets 401 and reaches nothing: a loopback port does not tell one
// local user from another, and the tools run commands as the server's
// user. An empty token serves everyone who reaches ln (a unix socket whose
// permission bits decide, or --no-auth). The SDK's DNS-rebinding protection
// stays on: a request to a loopback listener whose Host header is not a
// loopback name is refused. ready, if set, is told the URL once the
// listener serves.
func ServeHTTP(ctx context.Context, s *mcp.Server, ln net.Listener, token string, ready func(url string)) error {
	var handler http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if token != "" {
		handler = RequireToken(token)(handler)
	}
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, handler)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if ready != nil {
		host := ln.Addr().String()
		if ln.Addr().Network() == "unix" {
			host = "localhost" // what a client sends as Host over a socket
		}
		ready("http://" + host + HTTPPath)
	}
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}

// errWrongToken is what a client that sent a bearer token other than the
// server's is told.
var errWrongToken = fmt.Errorf("%w: not this server's token (qtask mcp printed it at its start; it is kept in the state directory's mcp-token file)", auth.ErrInvalidToken)

// RequireToken is the SDK's bearer-token middleware checking for token,
// compared in constant time so that the time of a refusal says nothing of
// how much of a guess was right. A request without it gets 401.
func RequireToken(token string) func(http.Handler) http.Handler {
	want := []byte(token)
	verify := func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			return nil, errWrongToken
		}
		return &auth.TokenInfo{}, nil
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
}

// ListenUnix listens on a unix socket at path that only the effective user
// can connect to (mode 0600; connecting needs write permission on it). A
// socket left there by a server that is gone is replaced; one a server
// still answers on, or any other file, is refused.
func ListenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket: move it away", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another qtask mcp --unix serves on it already", path)
		} else if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the stale socket: %w", err)
		}
	}
	// bind(2) makes the socket with the umask's mode; the state directory
	// (0700) keeps everyone else out until the chmod below.
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

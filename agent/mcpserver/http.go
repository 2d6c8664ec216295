package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where ServeHTTP answers MCP's streamable HTTP.
const HTTPPath = "/mcp"

// CheckListenAddr refuses an address that is not on a loopback interface,
// unless anyHost: the server runs commands for whoever reaches it, with no
// authentication of its own.
func CheckListenAddr(addr string, anyHost bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8765", addr)
	}
	if anyHost || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--http %q is not a loopback address: anyone who reaches it can run commands as you; "+
			"use 127.0.0.1 or ::1, or add --listen-any if you really mean it", addr)
	}
	return nil
}

// ServeHTTP serves s as MCP streamable HTTP on ln at HTTPPath until ctx
// ends. The SDK's DNS-rebinding protection stays on: a request to a
// loopback listener whose Host header is not a loopback name is refused.
// ready, if set, is told the URL once the listener serves.
func ServeHTTP(ctx context.Context, s *mcp.Server, ln net.Listener, ready func(url string)) error {
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
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
		ready("http://" + ln.Addr().String() + HTTPPath)
	}
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}

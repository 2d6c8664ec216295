package mcpserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where ServeHTTP answers MCP's streamable HTTP.
const HTTPPath = "/mcp"

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

// Package mcpaddr checks where the MCP server may listen. It is apart from
// the server so that qtask can refuse a bad `qtask mcp --http` address
// without linking the MCP SDK.
package mcpaddr

import (
	"fmt"
	"net"
)

// Check refuses an address that is not on a loopback interface, unless
// anyHost: the server runs commands for whoever reaches it and holds its
// token.
func Check(addr string, anyHost bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8765", addr)
	}
	// Checked here so that a bad port is a usage error like a bad host,
	// not a listen failure; a service name ("http") resolves as net does.
	// An empty one (an unset variable: "127.0.0.1:$PORT") would listen on
	// a port of the system's choosing, which only "0" asks for.
	if port == "" {
		return fmt.Errorf("--http %q: no port: want HOST:PORT, e.g. 127.0.0.1:8765 (port 0 for any free one)", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("--http %q: port %q is not a number from 0 to 65535", addr, port)
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

// CheckNoAuth refuses to serve without a token anywhere but on a loopback
// address written as one (127.0.0.1, ::1): a name such as localhost is
// whatever the resolver says, and with --listen-any other machines reach
// it. Even on loopback every local user can run commands as the server's
// user, which the caller warns of.
func CheckNoAuth(addr string, anyHost bool) error {
	if anyHost {
		return fmt.Errorf("--no-auth cannot go with --listen-any: anyone who reaches %s could run commands as you", addr)
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--no-auth needs --http with a loopback IP address, e.g. --http 127.0.0.1:8765 (got %q); "+
			"or drop --no-auth and give clients the token qtask mcp prints", addr)
	}
	return nil
}

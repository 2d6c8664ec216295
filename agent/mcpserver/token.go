package mcpserver

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/qtask/qtask/tasks/statefs"
)

// tokenName is the file, in the state directory, that keeps the bearer
// token `qtask mcp --http` requires of its clients.
const tokenName = "mcp-token"

// minToken is the shortest token Token accepts from its file: a token
// written by hand must not be guessable in a few tries.
const minToken = 16

// Token returns the bearer token `qtask mcp --http` requires of its
// clients and the file in stateDir (the state directory, as its store
// checked it) that keeps it, which it creates with a fresh random token (at
// least 128 bits) when there is none; created says so. The token stays
// across starts, so a client configured once keeps working; removing the
// file makes a new one at the next start. The file is used only when it is
// a regular file the effective user owns that nobody else can read or
// write: on a loopback port every local user can reach the server, and the
// token is all that tells its user from them.
func Token(stateDir string) (token, path string, created bool, err error) {
	path = filepath.Join(stateDir, tokenName)
	// Twice at most: a server starting at the same time may create the
	// file between our read and our link; then we read what it wrote.
	for range 2 {
		token, err = readToken(path)
		if !errors.Is(err, fs.ErrNotExist) {
			return token, path, false, err
		}
		token = rand.Text()
		w, err := statefs.Prepare(path) // 0600, O_EXCL: never through a symlink
		if err != nil {
			return "", path, false, err
		}
		// A link, not a rename: it fails if the file appeared meanwhile
		// instead of replacing a token a client may hold.
		err = w.CommitNew([]byte(token + "\n"))
		if err == nil {
			return token, path, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", path, false, err
		}
	}
	return "", path, false, fmt.Errorf("%s: created and removed again while it was read; start once more", path)
}

// readToken reads the token from path, refusing a file that is not
// private to the effective user or holds no usable token.
func readToken(path string) (string, error) {
	data, st, err := statefs.ReadOwnStat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	fix := "remove it and qtask mcp makes a new token"
	if err != nil {
		return "", fmt.Errorf("MCP token file %s: %w: %s", path, err, fix)
	}
	if perm := st.Mode & 0o777; perm&0o077 != 0 {
		return "", fmt.Errorf("MCP token file %s has mode %#o: others may read the token; chmod 600 it, or %s", path, perm, fix)
	}
	token := strings.TrimSpace(string(data))
	if len(token) < minToken || strings.ContainsFunc(token, func(r rune) bool { return !isTokenChar(r) }) {
		return "", fmt.Errorf("MCP token file %s: want one line of at least %d letters, digits or -._~+/=; %s", path, minToken, fix)
	}
	return token, nil
}

// isTokenChar reports whether r may appear in a bearer token as RFC 6750
// writes it (b64token, whose trailing '=' padding qtask never makes).
func isTokenChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/=", r)
}

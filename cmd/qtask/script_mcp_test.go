package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptEnvNames are the variables a script's world is made of
// (scriptWorld), passed on to the programs cmdMCP starts.
var scriptEnvNames = []string{"PATH", "HOME", "TMPDIR", "QTASK_STATE_DIR",
	"QTASK_CONFIG", "QTASK_TMUX_SOCKET", "QTASK_SCOPE", "QTASK_AGENT"}

// cmdMCP is `mcp FILE`: run `qtask mcp` as an MCP client does, sending
// FILE's lines one by one and, after each request (a line with an id),
// waiting for its response before the next, so every call is answered
// before stdin closes (at EOF the server ends and drops calls in flight,
// as a stdio server may: closing stdin is how a client shuts it down).
// $NAME in FILE is the script's variable, as in a script line (a task id
// from taskid). Everything the server wrote is then stdout; a line that is not JSON
// expects no answer of its own but gets one, read with the next request's.
func cmdMCP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mcp FILE")
	}
	cmd := exec.Command(qtaskBin, "mcp")
	cmd.Dir = ts.MkAbs(".")
	for _, name := range scriptEnvNames {
		if v := ts.Getenv(name); v != "" {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	in, err := cmd.StdinPipe()
	ts.Check(err)
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	cmd.Stderr = ts.Stderr()
	ts.Check(cmd.Start())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	requests := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
	for _, req := range strings.Split(strings.TrimSpace(requests), "\n") {
		fmt.Fprintln(in, req)
		if id, ok := requestID(req); ok {
			ts.Check(readUntilResponse(ts.Stdout(), lines, id))
		}
	}
	in.Close()
	for line := range lines {
		fmt.Fprintln(ts.Stdout(), line)
	}
	ts.Check(cmd.Wait())
}

// requestID is the id of a JSON-RPC request line; notifications and lines
// that are not JSON have none.
func requestID(line string) (string, bool) {
	var msg struct{ ID json.RawMessage }
	if json.Unmarshal([]byte(line), &msg) != nil || len(msg.ID) == 0 {
		return "", false
	}
	return string(msg.ID), true
}

// readUntilResponse copies the server's lines to w until the response to
// request id, or fails after qtaskDeadline.
func readUntilResponse(w io.Writer, lines <-chan string, id string) error {
	deadline := time.After(qtaskDeadline)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return fmt.Errorf("qtask mcp ended before answering request %s", id)
			}
			fmt.Fprintln(w, line)
			if got, ok := responseID(line); ok && got == id {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no response to request %s in %v", id, qtaskDeadline)
		}
	}
}

// responseID is the id of a JSON-RPC response (a result or an error).
func responseID(line string) (string, bool) {
	var msg struct {
		ID     json.RawMessage
		Result json.RawMessage
		Error  json.RawMessage
	}
	if json.Unmarshal([]byte(line), &msg) != nil || len(msg.ID) == 0 {
		return "", false
	}
	return string(msg.ID), msg.Result != nil || msg.Error != nil
}

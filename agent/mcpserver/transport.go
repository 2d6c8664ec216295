package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one inbound message, as the SDK's own stdio transport does.
const maxLine = mcp.DefaultMaxLineLength

// StdioTransport is newline-delimited JSON-RPC on in and out that survives
// a malformed line. The SDK's stdio transport ends the session on a line
// that is not JSON (its decoder cannot resynchronize); here each line is
// checked first, and one that is not a JSON-RPC message is answered with a
// JSON-RPC error (parse error, or invalid request) and dropped, so the
// server keeps serving. A tool result's notifications leave their queue
// once the line that carries them is written (see handover.go).
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	pr, pw := io.Pipe()
	w := &lockedWriter{w: out}
	go func() { pw.CloseWithError(filterLines(in, pw, w)) }()
	return &handOverTransport{Transport: &mcp.IOTransport{Reader: pr, Writer: w}, w: w}
}

// filterLines passes the well-formed lines of in to valid and answers the
// others on reply. It returns when in ends (nil at EOF) or valid is closed.
func filterLines(in io.Reader, valid io.Writer, reply io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	batches := true  // until initialize, as the SDK has it
	learned := false // the first initialize decides; the SDK refuses later ones
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if msg := refusal(line, tooLong, batches); msg != nil {
				if _, werr := reply.Write(msg); werr != nil {
					return werr
				}
			} else if _, werr := valid.Write(append(line, '\n')); werr != nil {
				return werr
			}
			if v, ok := initializeVersion(line); ok && !learned {
				batches, learned = batchesAllowed(v), true
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its newline, at most maxLine bytes of
// it; tooLong says the rest was dropped.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimRight(line, "\r\n"), tooLong, err
		}
	}
}

// refusal is the JSON-RPC error answering a line that is not one JSON-RPC
// message, or nil for a line to pass on. The id is echoed when it can be
// read, so the client can match the error to its request.
func refusal(line []byte, tooLong, batches bool) []byte {
	code, text := -32700, "parse error: the line is not one JSON value"
	if tooLong {
		text = "parse error: the message is longer than the limit of 16 MiB"
	} else if json.Valid(line) {
		err := decodeMessages(line, batches)
		if err == nil {
			return nil
		}
		code, text = -32600, "invalid request: "+err.Error()
	}
	var head struct {
		ID any `json:"id"`
	}
	json.Unmarshal(line, &head)
	switch head.ID.(type) {
	case string, float64:
	default:
		head.ID = nil
	}
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": head.ID,
		"error": map[string]any{"code": code, "message": text}})
	return append(data, '\n')
}

// decodeMessages checks that a JSON value is one JSON-RPC message, or a
// batch of them when the session allows batches (clients of protocol
// versions before 2025-06-18 may send them).
func decodeMessages(line []byte, batches bool) error {
	if line[0] != '[' {
		_, err := jsonrpc.DecodeMessage(line)
		return err
	}
	if !batches {
		return errors.New("JSON-RPC batches are not allowed from protocol version 2025-06-18 on: send one message a line")
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
		return errors.New("an empty or unreadable batch")
	}
	for _, m := range batch {
		msg, err := jsonrpc.DecodeMessage(m)
		if err != nil {
			return err
		}
		// The version a session speaks is learned from a lone initialize
		// (filterLines); the protocol never allows one in a batch.
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
			return errors.New("initialize cannot be part of a batch: send it alone on its line")
		}
	}
	return nil
}

// initializeVersion is the protocol version an initialize request asks
// for, and whether line is one.
func initializeVersion(line []byte) (string, bool) {
	if line[0] != '{' || !bytes.Contains(line, []byte(`"initialize"`)) {
		return "", false // the cheap test first: a line may be megabytes
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || req.Method != "initialize" {
		return "", false
	}
	return req.Params.ProtocolVersion, true
}

// batchesAllowed reports whether the SDK accepts batches in a session
// whose client asked for version v: only a supported version before
// 2025-06-18 is negotiated as asked; any other gets a newer one, in which
// the SDK ends the session on a batch.
func batchesAllowed(v string) bool {
	return v < "2025-06-18" && slices.Contains(mcp.SupportedProtocolVersions(), v)
}

// lockedWriter serializes whole-message writes of the SDK and of
// filterLines' refusals on one stream, and finishes the hand-overs of the
// tool calls whose responses it writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
	// calls are the tool calls awaiting their responses, by id.
	calls map[jsonrpc.ID]*mcp.RequestExtra
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	waiting := l.handOversIn(p)
	n, err := l.w.Write(p)
	for _, h := range waiting {
		h.finish(err == nil && n == len(p))
	}
	return n, err
}

func (l *lockedWriter) Close() error { return nil }

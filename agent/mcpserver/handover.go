package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/qtask/qtask/tasks"
)

// A tool result's notifications are delivered when the response that
// carries them is written to the client, not when the handler returns:
// the handler claims them (tasks.Delivery) and hands the claim over to the
// stdio transport, which commits it once the response's line is written
// to stdout and releases it (back to the queue, for the next result, hook
// or inbox) if the write fails or the connection closes first.
//
// The SDK gives a handler one thing the transport made for its request:
// the request's Extra. The stdio transport makes one for each tool call
// and registers it in handOvers, where the handler finds the hand-over
// by that pointer. A call with no registered Extra (streamable HTTP, whose
// transport the SDK runs) commits as the handler returns.

// handOver carries one tool call's claimed notifications from its handler
// to the write of its response.
type handOver struct {
	mu      sync.Mutex
	claim   *tasks.Delivery
	written bool // the response went out (or never will): claim nothing more
}

// handOvers maps the Extra of each tool call in flight on a stdio
// transport to its hand-over.
var handOvers sync.Map // *mcp.RequestExtra → *handOver

// deliverWithResult hands d to the transport that will write req's result,
// or commits it now where no transport takes it.
func deliverWithResult(req *mcp.CallToolRequest, d *tasks.Delivery) {
	v, ok := handOvers.Load(req.Extra)
	if !ok {
		d.Commit()
		return
	}
	h := v.(*handOver)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.written {
		d.Release() // its response is gone without this result
		return
	}
	h.claim = d
}

// finish commits the hand-over's claim if its response was written, and
// releases it if not.
func (h *handOver) finish(written bool) {
	h.mu.Lock()
	d := h.claim
	h.claim, h.written = nil, true
	h.mu.Unlock()
	if written {
		d.Commit()
	} else {
		d.Release()
	}
}

// handOverTransport is a transport whose tool calls hand their results'
// notifications over to the writes of their responses on w.
type handOverTransport struct {
	mcp.Transport
	w *lockedWriter
}

func (t *handOverTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &handOverConn{Connection: c, w: t.w}, nil
}

// handOverConn registers each tool call it reads for a hand-over, and
// releases what is still handed over when it closes.
type handOverConn struct {
	mcp.Connection
	w *lockedWriter
}

func (c *handOverConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "tools/call" && req.Extra == nil {
		extra := &mcp.RequestExtra{}
		req.Extra = extra
		c.w.expect(req.ID, extra)
	}
	return msg, err
}

func (c *handOverConn) Close() error {
	c.w.abandon()
	return c.Connection.Close()
}

// expect registers the call id, whose request carries extra, for a
// hand-over finished by the write of its response.
func (l *lockedWriter) expect(id jsonrpc.ID, extra *mcp.RequestExtra) {
	h := &handOver{}
	handOvers.Store(extra, h)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls == nil {
		l.calls = map[jsonrpc.ID]*mcp.RequestExtra{}
	}
	l.calls[id] = extra
}

// handOversIn takes the hand-overs of the responses in p, a line about to
// be written, for a caller holding l.mu: found before the write, so that
// nothing but the write separates the delivery from its commit. Their
// handlers have returned (a response is written after its handler), so
// the entries go.
func (l *lockedWriter) handOversIn(p []byte) []*handOver {
	if len(l.calls) == 0 {
		return nil
	}
	var hs []*handOver
	for _, id := range responseIDs(p) {
		if extra, ok := l.calls[id]; ok {
			delete(l.calls, id)
			if v, ok := handOvers.LoadAndDelete(extra); ok {
				hs = append(hs, v.(*handOver))
			}
		}
	}
	return hs
}

// abandon releases the hand-overs whose responses were never written. A
// handler still running finds its hand-over finished and releases what
// it claims; so the entry stays (the connection, and the server, are
// closing).
func (l *lockedWriter) abandon() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, extra := range l.calls {
		delete(l.calls, id)
		if v, ok := handOvers.Load(extra); ok {
			v.(*handOver).finish(false)
		}
	}
}

// responseIDs are the ids of the responses in line, one JSON-RPC message
// or a batch of them.
func responseIDs(line []byte) []jsonrpc.ID {
	line = bytes.TrimSpace(line)
	msgs := []json.RawMessage{line}
	if len(line) > 0 && line[0] == '[' {
		msgs = nil
		if json.Unmarshal(line, &msgs) != nil {
			return nil
		}
	}
	var ids []jsonrpc.ID
	for _, m := range msgs {
		if resp, err := jsonrpc.DecodeMessage(m); err == nil {
			if r, ok := resp.(*jsonrpc.Response); ok {
				ids = append(ids, r.ID)
			}
		}
	}
	return ids
}

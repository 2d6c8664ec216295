package main

import "github.com/qtask/qtask/tasks"

// appendTaskJSON appends t as json.Marshal encodes it (null for nil), for
// writeJSONList: `ls --json` of a thousand tasks spent most of its encoding
// in encoding/json's reflection (see tasks.Task.AppendJSON).
func appendTaskJSON(buf []byte, t *tasks.Task) ([]byte, error) {
	if t == nil {
		return append(buf, "null"...), nil
	}
	return t.AppendJSON(buf)
}

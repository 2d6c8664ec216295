package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/output"
)

type listArgs struct {
	Status string `json:"status,omitempty" jsonschema:"only tasks with this status: running, completed, failed or cancelled"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"at most this many tasks, the newest (default 50, at most 500)"`
}

// task_list shows the newest listDefault tasks unless asked for more, and
// never more than listMax: a scope of a thousand tasks would otherwise
// land whole in the model's context.
const (
	listDefault = 50
	listMax     = 500
)

func (h *handlers) list(c *call, in listArgs) (string, error) {
	filter := tasks.Filter{Scope: c.scope}
	if in.Status != "" {
		st, err := tasks.ParseStatus(in.Status)
		if err != nil {
			return "", argError("status: %v", err)
		}
		filter.Status = st
	}
	limit := listDefault
	if in.Limit != nil {
		if limit = *in.Limit; limit < 1 || limit > listMax {
			return "", argError("limit must be from 1 to %d", listMax)
		}
	}
	list, _, err := c.store.List(c.ctx, filter)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "No tasks.", nil
	}
	shown := list[max(len(list)-limit, 0):] // oldest first, as List has them
	var b strings.Builder
	now := time.Now()
	for _, t := range shown {
		fmt.Fprintf(&b, "%s  %s  %s  %s\n    output: %s\n", t.ID, t.StatusText(),
			t.Runtime(now).Round(time.Second), label(t), t.OutputPath)
	}
	if left := list[:len(list)-len(shown)]; len(left) > 0 {
		b.WriteString(leftOut(left, len(list), in.Status == "", filter.Scope))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// leftOut is the line that ends a cut list: how many older tasks of total
// are not shown (and how many of them run, when the list is not filtered
// by status) and how to see them.
func leftOut(left []*tasks.Task, total int, unfiltered bool, scope string) string {
	running := ""
	if n := countRunning(left); unfiltered && n > 0 {
		running = fmt.Sprintf(" (%d of them running: status \"running\" lists those)", n)
	}
	return fmt.Sprintf("… %d older tasks not shown, of %d in all%s. To see them: status narrows the list, "+
		"limit shows more (at most %d), `qtask ls --scope %s` lists them all.\n",
		len(left), total, running, listMax, scopeWord(scope))
}

func countRunning(list []*tasks.Task) int {
	n := 0
	for _, t := range list {
		if t.Running() {
			n++
		}
	}
	return n
}

// scopeWord is the scope as one shell word.
func scopeWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%:/._-+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// label is a task's name or command on one line, cut to a readable length.
func label(t *tasks.Task) string {
	s := strings.Join(strings.Fields(t.Label()), " ")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}

type taskArgs struct {
	TaskID string `json:"task_id" jsonschema:"the task's id, a unique prefix of it, or its name (the running task of that name, else the newest)"`
}

// statusTailChars is how much output task_status shows.
const statusTailChars = 2000

func (h *handlers) status(c *call, in taskArgs) (string, error) {
	t, err := c.store.Get(c.ctx, in.TaskID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	row := func(k, v string) { fmt.Fprintf(&b, "%s: %s\n", k, v) }
	row("id", t.ID)
	if t.Name != "" {
		row("name", t.Name)
	}
	row("status", t.StatusText())
	row("command", t.Command)
	row("cwd", t.Cwd)
	row("started", t.StartedAt.Format(time.RFC3339))
	if t.EndedAt != nil {
		row("ended", t.EndedAt.Format(time.RFC3339))
	}
	row("runtime", t.Runtime(time.Now()).Round(time.Millisecond).String())
	row("output file", t.OutputPath)
	if t.OutputLoss != "" {
		row("output lost", t.OutputLoss)
	}
	tail, cut, err := (output.File{Task: t.ID, Path: t.OutputPath}).Tail(statusTailChars)
	if err != nil {
		return "", err
	}
	if cut {
		fmt.Fprintf(&b, "--- last %d characters of output ---\n", statusTailChars)
	} else {
		b.WriteString("--- output ---\n")
	}
	b.WriteString(tail)
	return strings.TrimSuffix(b.String(), "\n"), nil
}

const taskOutputDescription = `Read a task's output file, running or ended. Without arguments: all of it, or its last 30000 bytes when longer.
offset and limit read a byte range (limit at most 30000); tail_lines reads the last N lines.`

type outputArgs struct {
	TaskID    string `json:"task_id" jsonschema:"the task's id, a unique prefix of it, or its name (the running task of that name, else the newest)"`
	Offset    *int64 `json:"offset,omitempty" jsonschema:"byte offset to read from"`
	Limit     *int64 `json:"limit,omitempty" jsonschema:"at most this many bytes (at most 30000)"`
	TailLines *int   `json:"tail_lines,omitempty" jsonschema:"read only the last N lines"`
}

func (h *handlers) output(c *call, in outputArgs) (string, error) {
	if in.TailLines != nil && (in.Offset != nil || in.Limit != nil) {
		return "", argError("tail_lines reads the end of the output: give either tail_lines or offset/limit, not both")
	}
	for name, v := range map[string]*int64{"offset": in.Offset, "limit": in.Limit} {
		if v != nil && *v < 0 {
			return "", argError("%s must not be negative", name)
		}
	}
	if in.TailLines != nil && *in.TailLines < 0 {
		return "", argError("tail_lines must not be negative")
	}
	t, err := c.store.Get(c.ctx, in.TaskID)
	if err != nil {
		return "", err
	}
	state := fmt.Sprintf("task %s %s", t.ID, t.StatusText())
	var b strings.Builder
	if in.TailLines != nil {
		return tailLines(c, t, *in.TailLines, state)
	}
	out := output.File{Task: t.ID, Path: t.OutputPath}
	size, err := out.Size()
	if err != nil {
		return "", err
	}
	offset, limit := max(size-maxTextBytes, 0), int64(maxTextBytes)
	if in.Offset != nil {
		offset = *in.Offset
	}
	if in.Limit != nil {
		limit = min(*in.Limit, maxTextBytes)
	}
	// Read takes a limit of 0 as "no limit"; here it means 0 bytes.
	if limit > 0 {
		if err := out.Read(&b, offset, limit); err != nil {
			return "", err
		}
	}
	end := min(offset+limit, max(size, offset))
	note := fmt.Sprintf("[bytes %d-%d of %d; %s; output file %s]", offset, end, size, state, t.OutputPath)
	if offset > 0 && in.Offset == nil {
		note = fmt.Sprintf("[bytes %d-%d of %d: earlier output left out, read it with offset and limit; %s; output file %s]",
			offset, end, size, state, t.OutputPath)
	}
	return withState(b.String(), note), nil
}

// tailLines is the last n lines of t's output, bounded like every read by
// maxTextBytes: a large n on a long output would otherwise put megabytes
// into the model's context.
func tailLines(c *call, t *tasks.Task, n int, state string) (string, error) {
	out := &tailBuffer{max: maxTextBytes}
	if _, err := (output.File{Task: t.ID, Path: t.OutputPath}).WriteTail(out, n); err != nil {
		return "", err
	}
	text := out.text(t.OutputPath)
	if out.dropped > 0 {
		return withState(text, fmt.Sprintf("[last %d lines, cut to the last %d bytes: read earlier output with offset and limit; %s; output file %s]",
			n, maxTextBytes, state, t.OutputPath)), nil
	}
	return withState(text, fmt.Sprintf("[last %d lines; %s; output file %s]", n, state, t.OutputPath)), nil
}

// withState ends output text with a line saying what it is.
func withState(text, note string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + note
}

func (h *handlers) stop(c *call, in taskArgs) (string, error) {
	t, err := c.store.Stop(c.ctx, in.TaskID, tasks.StopOptions{Grace: h.opts.Start.StopGrace})
	var notRunning *tasks.NotRunningError
	if errors.As(err, &notRunning) {
		return fmt.Sprintf("Task %s is not running: it already ended (%s).", notRunning.Task.ID, notRunning.Task.StatusText()), nil
	}
	if err != nil {
		return "", err
	}
	c.own = t.ID // this result reports its end
	return fmt.Sprintf("Stopped task %s: %s.", t.ID, t.StatusText()), nil
}

const taskWaitDescription = `Wait until every listed task has ended, or timeout_ms passes (at most 600000). Returns each task's end, or "still running".
It sleeps until a task ends; it does not poll.`

type waitArgs struct {
	TaskIDs   []string `json:"task_ids" jsonschema:"the tasks to wait for: ids, unique id prefixes or names"`
	TimeoutMS *int64   `json:"timeout_ms" jsonschema:"give up waiting after this many milliseconds (at most 600000)"`
}

func (h *handlers) wait(c *call, in waitArgs) (string, error) {
	if len(in.TaskIDs) == 0 {
		return "", argError("task_ids is empty: give the ids of the tasks to wait for")
	}
	if in.TimeoutMS == nil {
		return "", argError("timeout_ms is missing: give how long to wait, in milliseconds")
	}
	timeout, err := waitFor("timeout_ms", in.TimeoutMS, 0)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	list, err := c.store.Wait(ctx, in.TaskIDs)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return "", err
	}
	var b strings.Builder
	for _, t := range list {
		if t.Running() {
			fmt.Fprintf(&b, "%s still running after %s: %s\n", t.ID, timeout, label(t))
		} else {
			fmt.Fprintf(&b, "%s %s: %s\n", t.ID, t.StatusText(), label(t))
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

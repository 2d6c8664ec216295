package hooks

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/agent/route"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		agent Agent
		event string
		want  Kind
	}{
		{Claude, "UserPromptSubmit", Context}, {Claude, "PostToolUse", Context}, {Claude, "SessionStart", Context},
		{Claude, "Stop", EndOfTurn}, {Claude, "AfterAgent", Ignored}, {Claude, "PreToolUse", Route}, {Claude, "", Ignored},
		{Qwen, "PreToolUse", Guard}, {Gemini, "BeforeTool", Guard}, {Gemini, "PreToolUse", Ignored}, {Claude, "BeforeTool", Ignored},
		{Qwen, "UserPromptSubmit", Context}, {Qwen, "Stop", EndOfTurn}, {Qwen, "SubagentStop", Ignored},
		{Gemini, "BeforeAgent", Context}, {Gemini, "AfterTool", Context}, {Gemini, "SessionStart", Context},
		{Gemini, "AfterAgent", EndOfTurn}, {Gemini, "Stop", Ignored}, {Gemini, "UserPromptSubmit", Ignored},
	}
	for _, c := range cases {
		if got := c.agent.Classify(c.event); got != c.want {
			t.Errorf("%s %q classified %v, want %v", c.agent.Name, c.event, got, c.want)
		}
	}
}

func TestAnswer(t *testing.T) {
	if out := Claude.Answer("Stop", nil); out != nil {
		t.Errorf("Stop with nothing pending answered %q: a turn blocked without a reason", out)
	}
	if out := Gemini.Answer("PreCompress", []string{"<x/>"}); out != nil {
		t.Errorf("an ignored event answered %q", out)
	}
	var ctx map[string]map[string]string
	if err := json.Unmarshal(Qwen.Answer("PostToolUse", []string{"A", "B"}), &ctx); err != nil {
		t.Fatal(err)
	}
	if got := ctx["hookSpecificOutput"]; got["hookEventName"] != "PostToolUse" || got["additionalContext"] != "A\nB" {
		t.Errorf("context answer %v", ctx)
	}
	var block map[string]string
	if err := json.Unmarshal(Gemini.Answer("AfterAgent", []string{"<n/>"}), &block); err != nil {
		t.Fatal(err)
	}
	if block["decision"] != "block" || block["reason"] != stopLead+"<n/>" {
		t.Errorf("end-of-turn answer %v", block)
	}
}

func TestReadInput(t *testing.T) {
	read := func(s string) (Input, error) {
		return ReadInput(context.Background(), strings.NewReader(s), time.Minute)
	}
	in, err := read(`{"session_id":"abc","hook_event_name":"Stop","stop_hook_active":true,"extra":[1]}`)
	if err != nil || in.SessionID != "abc" || in.Event != "Stop" || !in.StopHookActive {
		t.Errorf("ReadInput = %+v, %v", in, err)
	}
	if in, err := read(" \n"); err != nil || !reflect.DeepEqual(in, Input{}) {
		t.Errorf("empty input = %+v, %v; want nothing, no error", in, err)
	}
	for _, bad := range []string{"{", "[1]", `"s"`, "x"} {
		if _, err := read(bad); err == nil {
			t.Errorf("ReadInput(%q) accepted it", bad)
		}
	}
}

// TestReadInputLeftOpen: an agent that keeps stdin open is answered once
// its event is whole; one that sends no whole event is given up on at the
// deadline, and a cancelled hook (a signal) stops waiting at once.
func TestReadInputLeftOpen(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	w.WriteString(`{"hook_event_name":"Stop"}`)
	if in, err := ReadInput(context.Background(), r, time.Minute); err != nil || in.Event != "Stop" {
		t.Errorf("a whole event on an open stdin: %+v, %v; want it read without waiting for the end", in, err)
	}
	w.WriteString(`{"hook_event_name":`)
	if _, err := ReadInput(context.Background(), r, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "stdin still open") {
		t.Errorf("half an event on an open stdin: %v; want the deadline's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := ReadInput(ctx, r, time.Minute); err != context.Canceled {
		t.Errorf("cancelled while reading: %v; want %v", err, context.Canceled)
	}
}

// TestForkedFromReadsOnlyRegularFiles: the transcript path comes with the
// event; a FIFO once hung the hook in open(2), deaf to SIGTERM. Only a
// regular file is read (through a link too), only its head.
func TestForkedFromReadsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	fork := `{"uuid":"1","forkedFrom":{"sessionId":"parent"}}` + "\n"
	if err := os.WriteFile(path("fork.jsonl"), []byte(fork), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink(path("fork.jsonl"), path("link.jsonl"))
	syscall.Mkfifo(path("fifo"), 0o600)
	os.Symlink(path("fifo"), path("fifo-link"))
	// A huge transcript whose fork mark lies past what is scanned.
	big, err := os.Create(path("big.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(200 << 20)
	big.WriteAt([]byte("\n"+fork), 200<<20)
	big.Close()
	for _, c := range []struct{ path, want string }{
		{path("fork.jsonl"), "parent"}, {path("link.jsonl"), "parent"},
		{path("fifo"), ""}, {path("fifo-link"), ""}, {"/dev/zero", ""}, {dir, ""},
		{path("big.jsonl"), ""}, {path("missing"), ""},
	} {
		done := make(chan string, 1)
		go func() { done <- forkedFrom(c.path) }()
		select {
		case got := <-done:
			if got != c.want {
				t.Errorf("forkedFrom(%s) = %q, want %q", c.path, got, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("forkedFrom(%s) did not return", c.path)
		}
	}
}

func TestBlockCounter(t *testing.T) {
	dir := t.TempDir()
	c := NewBlockCounter(dir, Agent{Name: "x", BlockCap: 2}, "s")
	for i := range 2 {
		if !c.Allow(i > 0) {
			t.Fatalf("block %d refused under a cap of 2", i+1)
		}
		c.Blocked()
	}
	if NewBlockCounter(dir, Agent{Name: "x", BlockCap: 2}, "s").Allow(true) {
		t.Error("a third consecutive block allowed under a cap of 2")
	}
	if !NewBlockCounter(dir, Agent{Name: "x", BlockCap: 2}, "other").Allow(true) {
		t.Error("another session's count applied")
	}
	if !c.Allow(false) {
		t.Error("a new turn (stop_hook_active false) did not start a new count")
	}
}

func TestRoute(t *testing.T) {
	dir := t.TempDir()
	bg := Input{SessionID: "s1", Event: "PreToolUse", ToolName: "Bash", ToolInput: shellCall(t, ShellCall{Command: "make", RunInBackground: true})}
	if out, err := Claude.Route(bg, Options{StateDir: dir, Routed: true}); out != nil || err != nil {
		t.Fatalf("Claude's PreToolUse answered %q (%v): it must never rewrite or decide", out, err)
	}
	if c, ok := route.TakeCall(filepath.Join(dir, "agent"), "s1", "make"); !ok || !c.Background {
		t.Errorf("a routed background call left no mark for the shell prefix")
	}
	Claude.Route(bg, Options{StateDir: dir, Routed: false})
	if _, ok := route.TakeCall(filepath.Join(dir, "agent"), "s1", "make"); ok {
		t.Errorf("a mark was left without routing")
	}
	// A call the user refuses leaves its mark (the hook runs before the
	// permission check); the next call of the command replaces it.
	fg := bg
	fg.ToolInput = shellCall(t, ShellCall{Command: "make", Timeout: 600000})
	Claude.Route(fg, Options{StateDir: dir, Routed: true})
	fg.ToolInput = shellCall(t, ShellCall{Command: "make"})
	Claude.Route(fg, Options{StateDir: dir, Routed: true})
	if c, ok := route.TakeCall(filepath.Join(dir, "agent"), "s1", "make"); !ok || c != (route.Call{}) {
		t.Errorf("a plain foreground call after a refused one left %+v, %v; want its own plain mark", c, ok)
	}
	fg.ToolInput = shellCall(t, ShellCall{Command: "make", Timeout: 300000})
	Claude.Route(fg, Options{StateDir: dir, Routed: true})
	if c, ok := route.TakeCall(filepath.Join(dir, "agent"), "s1", "make"); !ok || c != (route.Call{Timeout: 5 * time.Minute}) {
		t.Errorf("a foreground call with its own timeout left %+v, %v; want that timeout for the prefix", c, ok)
	}

	for _, other := range []Input{
		{SessionID: "s1", ToolName: "Read", ToolInput: shellCall(t, ShellCall{Command: "x", RunInBackground: true})},
		{SessionID: "s1", ToolName: "Bash", ToolInput: json.RawMessage(`{"command": 7, "run_in_background": true}`)},
	} {
		if out, err := Claude.Route(other, Options{StateDir: dir, Routed: true}); out != nil || err != nil {
			t.Errorf("%+v: %q %v", other, out, err)
		}
	}

	// The model's TaskStop leaves a stop mark for Claude's id of the call.
	stop := Input{SessionID: "s1", Event: "PreToolUse", ToolName: "TaskStop", ToolInput: json.RawMessage(`{"task_id": "bm94dz7b3"}`)}
	if out, err := Claude.Route(stop, Options{StateDir: dir, Routed: true}); out != nil || err != nil {
		t.Fatalf("Claude's PreToolUse for TaskStop answered %q (%v): it must never rewrite or decide", out, err)
	}
	if !route.TakeStop(filepath.Join(dir, "agent"), "s1", "bm94dz7b3") {
		t.Errorf("the model's TaskStop left no stop mark")
	}
	Claude.Route(stop, Options{StateDir: dir, Routed: false})
	if route.TakeStop(filepath.Join(dir, "agent"), "s1", "bm94dz7b3") {
		t.Errorf("a stop mark was left without routing")
	}
	if m := Claude.RouteMatcher(); m != "Bash|TaskStop" {
		t.Errorf("Claude's route matcher is %q", m)
	}
}

// TestGuard: qwen's and gemini's shell tool's own background option is
// denied with the line that runs the command as a task, quoted for the
// shell (with the directory the call asked for); every other call, and
// every other tool, gets no answer.
func TestGuard(t *testing.T) {
	call := func(input string) Input {
		return Input{Event: "PreToolUse", ToolName: "run_shell_command", ToolInput: json.RawMessage(input)}
	}
	cases := []struct {
		a     Agent
		in    Input
		qtask string
		want  string // the line in the reason; "" for no answer
	}{
		{Qwen, call(`{"command":"npm run dev","is_background":true}`), "qtask", `qtask run --agent --bg -- 'npm run dev'`},
		{Gemini, call(`{"command":"echo $HOME","is_background":true,"dir_path":"web app"}`), "/opt/q/qtask",
			`/opt/q/qtask run --agent --bg --cwd 'web app' -- 'echo $HOME'`},
		{Qwen, call(`{"command":"make","is_background":true,"directory":"/src"}`), "qtask", `qtask run --agent --bg --cwd /src -- make`},
		{Qwen, call(`{"command":"make","is_background":false}`), "qtask", ""},
		{Qwen, call(`{"command":"make"}`), "qtask", ""},
		{Qwen, call(`{"command":"  ","is_background":true}`), "qtask", ""},
		{Qwen, call(`{"command":7,"is_background":true}`), "qtask", ""},
		{Qwen, Input{ToolName: "write_file", ToolInput: json.RawMessage(`{"command":"x","is_background":true}`)}, "qtask", ""},
	}
	for _, c := range cases {
		out := c.a.Guard(c.in, c.qtask)
		if c.want == "" {
			if out != nil {
				t.Errorf("%s %s: answered %s, want nothing", c.a.Name, c.in.ToolInput, out)
			}
			continue
		}
		var v map[string]string
		if err := json.Unmarshal(out, &v); err != nil || v["decision"] != "deny" || !strings.Contains(v["reason"], "\n"+c.want+"\n") {
			t.Errorf("%s %s: answered %s (%v); want a deny whose reason has the line %s", c.a.Name, c.in.ToolInput, out, err, c.want)
		}
	}
	// The line gives the shell the model's command as written, whatever
	// it holds.
	for _, command := range []string{"a'b", `"$(x)" $HOME`, "x\ny", "'", `\`} {
		in := call(`{"is_background":true,"command":` + strconv.Quote(command) + `}`)
		var v map[string]string
		json.Unmarshal(Qwen.Guard(in, "qtask"), &v)
		_, line, _ := strings.Cut(v["reason"], "\nqtask run --agent --bg -- ")
		word := line[:strings.LastIndex(line, "\nIt returns")]
		if got, err := exec.Command("sh", "-c", `printf %s `+word).Output(); err != nil || string(got) != command {
			t.Errorf("command %q: the line's word %s gives the shell %q (%v)", command, word, got, err)
		}
	}
}

func shellCall(t *testing.T, c ShellCall) json.RawMessage {
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A tool whose input has fields of other types than the shell tool's must
// not make a hook's input unreadable.
func TestReadInputOtherToolInput(t *testing.T) {
	in, err := ReadInput(context.Background(), strings.NewReader(`{"hook_event_name":"PostToolUse","tool_name":"X","tool_input":{"command":7,"run_in_background":"yes"}}`), time.Minute)
	if err != nil || in.Event != "PostToolUse" {
		t.Fatalf("ReadInput: %+v %v", in, err)
	}
}

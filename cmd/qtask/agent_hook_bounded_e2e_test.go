package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
)

// openStdin is a pipe for a hook's stdin whose write end the test keeps
// open (as an agent that never closes it would) until the test ends; what
// is given is written first.
func openStdin(t *testing.T, written string) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	if _, err := w.WriteString(written); err != nil {
		t.Fatal(err)
	}
	return r
}

// endsWithin waits for fg to end and fails the test (killing fg) if it is
// not over bound after since: it returns how long it took from since.
func endsWithin(t *testing.T, fg *foreground, since time.Time, bound time.Duration, what string) time.Duration {
	t.Helper()
	select {
	case <-fg.done:
	case <-time.After(time.Until(since.Add(bound))):
		fg.cmd.Process.Kill()
		<-fg.done
		t.Errorf("%s: still running after %v (killed); stderr %q", what, bound, fg.stderr.String())
	}
	return time.Since(since)
}

// TestAgentHookBoundedInput: a hook whose event names a transcript that
// is a FIFO hung every agent's hook in open(2), and SIGTERM did not end
// it. Whatever the transcript (a FIFO, a device, a 200 MB file), the
// hook answers at once with the pending notification; a hook whose stdin
// stays open without a whole event gives up at its deadline with a
// warning and exit 0, and consumes nothing.
func TestAgentHookBoundedInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	fifo := filepath.Join(h.root, "transcript.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(h.root, "transcript.jsonl")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 200<<20); err != nil { // sparse: instant
		t.Fatal(err)
	}
	for _, agent := range []string{"claude", "qwen", "gemini"} {
		for _, transcript := range []string{fifo, "/dev/zero", big} {
			scope := agent + "-" + filepath.Base(transcript)
			id := h.endTask(scope, "true")
			input := `{"session_id":"` + scope + `","hook_event_name":"SessionStart","transcript_path":"` + transcript + `"}`
			began := time.Now()
			hook := h.spawnStdin(strings.NewReader(input), []string{"QTASK_SCOPE=" + scope}, "agent", "hook", agent)
			took := endsWithin(t, hook, began, time.Second, agent+" SessionStart with transcript "+transcript)
			var a hookAnswer
			json.Unmarshal([]byte(hook.stdout.String()), &a)
			if hook.code != 0 || !strings.Contains(a.HookSpecificOutput.AdditionalContext, "<task-id>"+id+"</task-id>") {
				t.Errorf("%s SessionStart with transcript %s: exit %d after %v, stdout %q, stderr %q; want exit 0 with the notification of %s",
					agent, transcript, hook.code, took.Round(time.Millisecond), hook.stdout.String(), hook.stderr.String(), id)
			}
		}
	}

	testenv.SkipShort(t, "the open-stdin cases wait for the hook's 3 s deadline")
	// An open stdin: nothing sent, or half an event; the three agents at once.
	type open struct {
		agent, scope, id string
		hook             *foreground
		began            time.Time
	}
	var opens []open
	for _, agent := range []string{"claude", "qwen", "gemini"} {
		for i, written := range []string{"", `{"session_id":"x","hook_event_name":`} {
			o := open{agent: agent, scope: agent + "-open-" + strconv.Itoa(i)}
			o.id = h.endTask(o.scope, "true")
			o.began = time.Now()
			o.hook = h.spawnStdin(openStdin(t, written), []string{"QTASK_SCOPE=" + o.scope}, "agent", "hook", agent, "--event", "SessionStart")
			opens = append(opens, o)
		}
	}
	for _, o := range opens {
		took := endsWithin(t, o.hook, o.began, 5*time.Second, o.agent+" hook with stdin left open")
		if o.hook.code != 0 || o.hook.stdout.String() != "" || !strings.Contains(o.hook.stderr.String(), "stdin still open") {
			t.Errorf("%s hook with stdin left open: exit %d after %v, stdout %q, stderr %q; want exit 0, a warning, no answer",
				o.agent, o.hook.code, took.Round(time.Millisecond), o.hook.stdout.String(), o.hook.stderr.String())
		}
		if a, _ := h.hook(o.scope, "", o.agent, "--event", "SessionStart"); !strings.Contains(a.HookSpecificOutput.AdditionalContext, o.id) {
			t.Errorf("%s: after a hook gave up on its stdin, the notification of %s was gone: %+v", o.agent, o.id, a)
		}
	}
}

// awaitThread waits until one of fg's threads sleeps in the kernel
// function named by wchan (pipe_read: blocked reading a pipe).
func awaitThread(t *testing.T, fg *foreground, wchan string) {
	t.Helper()
	pid := strconv.Itoa(fg.cmd.Process.Pid)
	eventually(t, "qtask (pid "+pid+") to block in "+wchan, func() bool {
		threads, _ := filepath.Glob("/proc/" + pid + "/task/*/wchan")
		for _, th := range threads {
			if data, err := os.ReadFile(th); err == nil && strings.Contains(string(data), wchan) {
				return true
			}
		}
		return false
	})
}

// awaitInotify waits until fg watches files with inotify: a store wait
// (the hold) past its first polls.
func awaitInotify(t *testing.T, fg *foreground) {
	t.Helper()
	pid := strconv.Itoa(fg.cmd.Process.Pid)
	eventually(t, "qtask (pid "+pid+") to watch the task records", func() bool {
		fds, _ := filepath.Glob("/proc/" + pid + "/fd/*")
		for _, fd := range fds {
			if link, err := os.Readlink(fd); err == nil && strings.Contains(link, "inotify") {
				return true
			}
		}
		return false
	})
}

// TestAgentHookEndsOnSignal: SIGTERM and SIGINT end a hook blocked on an
// open stdin, or holding the end of a turn for running tasks, at once
// (exit 128+signal), and a hook ended so consumes nothing; the asyncRewake
// waiter ends at once too. The time from
// the signal to the exit is logged; bench/agent-hook.sh measures it.
func TestAgentHookEndsOnSignal(t *testing.T) {
	t.Parallel()
	if !isolated(t) {
		return
	}
	h := newHarness(t)
	h.writeConfig("shell = \"sh\"\n")
	const bound = 2 * time.Second // generous: the measured time is a few ms
	for _, agent := range []string{"claude", "qwen", "gemini"} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			hook := h.spawnStdin(openStdin(t, ""), []string{"QTASK_SCOPE=S"}, "agent", "hook", agent, "--event", "SessionStart")
			awaitThread(t, hook, "pipe_read")
			began := time.Now()
			hook.cmd.Process.Signal(sig)
			took := endsWithin(t, hook, began, bound, agent+" hook on an open stdin, sent "+sig.String())
			t.Logf("%s hook on an open stdin ended %v after %v", agent, took, sig)
			if hook.code != 128+int(sig) {
				t.Errorf("%s hook on an open stdin, sent %v: exit %d, want %d; stderr %q", agent, sig, hook.code, 128+int(sig), hook.stderr.String())
			}
		}
	}

	// Holding the end of a turn: a task runs, another's end is queued.
	ended := h.endTask("H", "true")
	running := decodeTask(t, h.qtaskIn(h.root, []string{"QTASK_SCOPE=H"}, "run", "--bg", "--json", "--", "sleep 300").stdout)
	for _, c := range []struct{ agent, event string }{{"claude", "Stop"}, {"qwen", "Stop"}, {"gemini", "AfterAgent"}} {
		input := `{"session_id":"h1","hook_event_name":"` + c.event + `"}`
		hook := h.spawnStdin(strings.NewReader(input), []string{"QTASK_SCOPE=H"}, "agent", "hook", c.agent, "--hold", "60s")
		awaitInotify(t, hook)
		began := time.Now()
		hook.cmd.Process.Signal(syscall.SIGTERM)
		took := endsWithin(t, hook, began, bound, c.agent+" --hold, sent SIGTERM")
		t.Logf("%s --hold ended %v after SIGTERM", c.agent, took)
		if hook.code != 128+int(syscall.SIGTERM) || hook.stdout.String() != "" {
			t.Errorf("%s --hold, sent SIGTERM: exit %d, stdout %q; want %d and no answer (an agent that ends a hook does not read it)",
				c.agent, hook.code, hook.stdout.String(), 128+int(syscall.SIGTERM))
		}
	}
	if a, _ := h.hook("H", `{"session_id":"h1","hook_event_name":"UserPromptSubmit"}`, "claude"); !strings.Contains(a.HookSpecificOutput.AdditionalContext, ended) {
		t.Errorf("after hooks ended by SIGTERM while holding, the notification of %s was gone: %+v", ended, a)
	}
	// Claude's asyncRewake waiter, waiting for the running task's end: a
	// newer waiter ends it with SIGTERM, and it exits 0 (2 would wake the
	// model with nothing).
	waiter := h.spawnStdin(strings.NewReader(`{"session_id":"h1","hook_event_name":"Stop"}`), []string{"QTASK_SCOPE=H"}, "agent", "hook", "claude", "--rewake", "60s")
	awaitInotify(t, waiter)
	began := time.Now()
	waiter.cmd.Process.Signal(syscall.SIGTERM)
	took := endsWithin(t, waiter, began, bound, "claude --rewake, sent SIGTERM")
	t.Logf("claude --rewake ended %v after SIGTERM", took)
	if waiter.code != 0 || waiter.stderr.String() != "" {
		t.Errorf("claude --rewake, sent SIGTERM: exit %d, stderr %q; want 0 and nothing said", waiter.code, waiter.stderr.String())
	}
	h.mustQtask("stop", running.ID)
}

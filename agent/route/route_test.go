package route

import (
	"os"
	"strings"
	"testing"
	"time"
)

// claudeScript builds the script Claude 2.1.330 hands its shell prefix for
// a Bash call of command, as measured (snapshot, options, eval, cwd file).
func claudeScript(quoted string) string {
	return `source /home/u/.claude/shell-snapshots/snapshot-bash-1795457157284-si3n45.sh 2>/dev/null || true && ` +
		`{ \builtin shopt -u extglob || \builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS; } >/dev/null 2>&1 || true && ` +
		`{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && ` +
		`eval ` + quoted + ` < /dev/null && pwd -P >| /tmp/claude-c4df-cwd`
}

// singleQuote quotes s as one shell word in single quotes, each quote
// inside closed, escaped and reopened.
func singleQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// doubleQuote quotes s as "…", escaping what is special inside.
func doubleQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")
	return `"` + r.Replace(s) + `"`
}

var commands = []string{
	"touch made-it",
	`echo "it's $HOME" 'a"b' && cd /tmp && pwd; exit 3`,
	"sleep 1; echo bg-done",
	"x && eval 'y' < /dev/null && pwd -P >| /tmp/z",
	"printf '%s\\n' a b | sort -r\n echo two lines",
	"echo \\\\ \\' \\\" $(date) `id` *",
	"héllo wörld ✓",
	" ",
}

func TestClaudeCommand(t *testing.T) {
	for _, cmd := range commands {
		for _, quoted := range []string{singleQuote(cmd), doubleQuote(cmd)} {
			got, ok := ClaudeCommand(claudeScript(quoted))
			if !ok || got != cmd {
				t.Errorf("from the script around %s: %q, %v; want %q", quoted, got, ok, cmd)
			}
		}
	}
	for _, notTool := range []string{
		"/usr/local/bin/qtask agent hook claude",
		"cat > /tmp/probe/hookin-$$.json; echo hook-ran",
		"'/usr/bin/node' 'server.js' '--port' '3000'",
		"eval 'x'",
		"eval 'x' < /dev/null && pwd -P >| /tmp/cwd; rm -rf /",
		"eval $CMD < /dev/null && pwd -P >| /tmp/cwd",
		"eval 'open < /dev/null && pwd -P >| /tmp/cwd",
		"reeval 'x' < /dev/null && pwd -P >| /tmp/cwd",
		"",
	} {
		if got, ok := ClaudeCommand(notTool); ok {
			t.Errorf("%q was taken for a tool call of %q", notTool, got)
		}
	}
}

// TestClaudeCommandWithHeredoc: Claude leaves out `< /dev/null` when the
// command redirects its input (a here-document, `< FILE`, `<<<`: measured);
// such a call is a tool call all the same.
func TestClaudeCommandWithHeredoc(t *testing.T) {
	for _, cmd := range []string{"cat <<'EOF'\nline1\nEOF\necho second", "python3 - <<EOF\nprint(1)\nEOF", "wc -c < /etc/hostname", "tr a b <<< abc"} {
		script := strings.Replace(claudeScript(singleQuote(cmd)), " < /dev/null && pwd", " && pwd", 1)
		if got, ok := ClaudeCommand(script); !ok || got != cmd {
			t.Errorf("from the script around %q without < /dev/null: %q, %v; want it", cmd, got, ok)
		}
	}
	if got, ok := ClaudeCommand("eval 'x' && pwd -P >| /tmp/cwd; rm -rf /"); ok {
		t.Errorf("a script with more after the cwd file is a tool call: %q", got)
	}
}

func TestClaudeShell(t *testing.T) {
	if s := ClaudeShell(claudeScript("'x'")); s != "bash" {
		t.Errorf("bash snapshot: %s", s)
	}
	if s := ClaudeShell("source /h/.claude/shell-snapshots/snapshot-zsh-1-a.sh && eval 'x' < /dev/null && pwd -P >| /c"); s != "zsh" {
		t.Errorf("zsh snapshot: %s", s)
	}
}

func TestTimeouts(t *testing.T) {
	for _, c := range []struct {
		env  string
		tool time.Duration
	}{{"", 2 * time.Minute}, {"300000", 5 * time.Minute}, {"junk", 2 * time.Minute}, {"-5", 2 * time.Minute}, {"6000", 6 * time.Second}} {
		if got := ClaudeToolTimeout(c.env); got != c.tool {
			t.Errorf("BASH_DEFAULT_TIMEOUT_MS=%q: %v, want %v", c.env, got, c.tool)
		}
	}
	for _, c := range []struct {
		env        string
		dflt, want time.Duration
	}{
		{"", 2 * time.Minute, 10 * time.Minute},
		{"300000", 2 * time.Minute, 5 * time.Minute},
		{"1800000", 2 * time.Minute, 30 * time.Minute},
		{"60000", 2 * time.Minute, 2 * time.Minute}, // never below the default
		{"soon", 2 * time.Minute, 10 * time.Minute},
	} {
		if got := ClaudeMaxTimeout(c.env, c.dflt); got != c.want {
			t.Errorf("ClaudeMaxTimeout(%q, %v) = %v, want %v", c.env, c.dflt, got, c.want)
		}
	}
	if got := BackgroundAfter(2 * time.Minute); got != 110*time.Second {
		t.Errorf("BackgroundAfter(2m) = %v, want 110s", got)
	}
	if got := BackgroundAfter(6 * time.Second); got != 5*time.Second {
		t.Errorf("BackgroundAfter(6s) = %v, want 5s", got)
	}
	for tool, want := range map[time.Duration]time.Duration{time.Second: 500 * time.Millisecond, 1050 * time.Millisecond: 525 * time.Millisecond, time.Millisecond: time.Millisecond} {
		if got := BackgroundAfter(tool); got != want {
			t.Errorf("BackgroundAfter(%v) = %v, want %v: a short tool timeout keeps half, never none", tool, got, want)
		}
	}
	for _, c := range []struct{ configured, tool, want time.Duration }{
		{2 * time.Minute, 0, 2 * time.Minute},
		{2 * time.Minute, 2 * time.Minute, 110 * time.Second},
		{0, 2 * time.Minute, 110 * time.Second},
		{2 * time.Second, 2 * time.Minute, 2 * time.Second},
	} {
		if got := ForegroundTimeout(c.configured, c.tool); got != c.want {
			t.Errorf("ForegroundTimeout(%v, %v) = %v, want %v", c.configured, c.tool, got, c.want)
		}
	}
}

// FuzzClaudeCommand: any command, quoted either way Claude may quote it,
// comes back out of the script byte for byte.
func FuzzClaudeCommand(f *testing.F) {
	for _, c := range commands {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if cmd == "" {
			return
		}
		for _, quoted := range []string{singleQuote(cmd), doubleQuote(cmd)} {
			got, ok := ClaudeCommand(claudeScript(quoted))
			if !ok || got != cmd {
				t.Fatalf("from the script around %s: %q, %v; want %q", quoted, got, ok, cmd)
			}
		}
	})
}

func TestCallMarks(t *testing.T) {
	dir := t.TempDir()
	if _, ok := TakeCall(dir, "s1", "make"); ok {
		t.Fatal("a mark nobody left was taken")
	}
	if err := MarkCall(dir, "s1", "make", Call{Background: true}); err != nil {
		t.Fatal(err)
	}
	_, other := TakeCall(dir, "s2", "make")
	_, otherCommand := TakeCall(dir, "s1", "make test")
	if other || otherCommand {
		t.Fatal("a mark was taken by another session or command")
	}
	if c, ok := TakeCall(dir, "s1", "make"); !ok || c != (Call{Background: true}) {
		t.Fatalf("the mark was taken as %+v, %v", c, ok)
	}
	if _, ok := TakeCall(dir, "s1", "make"); ok {
		t.Fatal("a mark was taken twice")
	}
	MarkCall(dir, "s1", "make", Call{Timeout: 9 * time.Minute})
	if c, ok := TakeCall(dir, "s1", "make"); !ok || c != (Call{Timeout: 9 * time.Minute}) {
		t.Fatalf("a foreground call's timeout came back as %+v, %v", c, ok)
	}
	// An older qtask marked background calls with an empty file.
	os.WriteFile(markPath(dir, "bg-", "s1", "older"), nil, 0o600)
	if c, ok := TakeCall(dir, "s1", "older"); !ok || c != (Call{Background: true}) {
		t.Fatalf("an older qtask's mark was taken as %+v, %v; want a background call", c, ok)
	}
	MarkCall(dir, "s1", "old", Call{Background: true})
	old := time.Now().Add(-markTTL - time.Minute)
	os.Chtimes(markPath(dir, "bg-", "s1", "old"), old, old)
	if _, ok := TakeCall(dir, "s1", "old"); ok {
		t.Fatal("a stale mark was taken")
	}
	if _, err := os.Stat(markPath(dir, "bg-", "s1", "old")); err == nil {
		t.Fatal("a stale mark was left behind")
	}
}

func TestStopMarks(t *testing.T) {
	dir := t.TempDir()
	if TakeStop(dir, "s1", "b1") {
		t.Fatal("a stop nobody asked for was taken")
	}
	if err := MarkStop(dir, "s1", "b1"); err != nil {
		t.Fatal(err)
	}
	if TakeStop(dir, "s2", "b1") || TakeStop(dir, "s1", "b2") {
		t.Fatal("a stop mark was taken by another session or task")
	}
	if _, ok := TakeCall(dir, "s1", "b1"); ok {
		t.Fatal("a stop mark was taken as a call's mark")
	}
	if !TakeStop(dir, "s1", "b1") || TakeStop(dir, "s1", "b1") {
		t.Fatal("a stop mark was not taken exactly once")
	}
}

func TestClaudeTaskID(t *testing.T) {
	for path, want := range map[string]string{
		"/tmp/claude-0/-proj/3a74a36a-2144/tasks/bm94dz7b3.output": "bm94dz7b3",
		"/tmp/claude-0/-proj/3a74a36a-2144/tasks/.output":          "",
		"/tmp/claude-0/-proj/3a74a36a-2144/bm94dz7b3.output":       "",
		"/tmp/claude-0/-proj/tasks/bm94dz7b3.log":                  "",
		"/dev/pts/3": "",
	} {
		if got, ok := ClaudeTaskID(path); got != want || ok != (want != "") {
			t.Errorf("ClaudeTaskID(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}

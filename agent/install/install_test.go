package install

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/agent/hooks"
)

const cmdClaude = "/usr/local/bin/qtask agent hook claude"

// userSettings is a Claude settings file as a user might have it, in the
// agents' own two-space style.
const userSettings = `{
  "permissions": {
    "allow": [
      "Bash(make:*)"
    ]
  },
  "hooks": {
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "my-own-hook <&>"
          }
        ]
      }
    ]
  },
  "env": {
    "FOO": "1"
  }
}
`

func mustAdd(t *testing.T, a hooks.Agent, settings, command string, hold time.Duration) string {
	t.Helper()
	out, err := Add(a, []byte(settings), command, hold)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	return string(out)
}

type hookEntry struct {
	Type, Command, Name, Description string
	Timeout                          int64
}

func decodeHooks(t *testing.T, settings string) map[string][]struct{ Hooks []hookEntry } {
	t.Helper()
	var v struct {
		Hooks map[string][]struct{ Hooks []hookEntry }
	}
	if err := json.Unmarshal([]byte(settings), &v); err != nil {
		t.Fatalf("settings are not JSON: %v\n%s", err, settings)
	}
	return v.Hooks
}

func TestAddMergesAndRemoveRestores(t *testing.T) {
	added := mustAdd(t, hooks.Claude, userSettings, cmdClaude, 0)
	h := decodeHooks(t, added)
	for _, ev := range hooks.Claude.Events() {
		var ours []hookEntry
		for _, g := range h[ev] {
			for _, e := range g.Hooks {
				if e.Command == cmdClaude {
					ours = append(ours, e)
				}
			}
		}
		if len(ours) != 1 || ours[0].Type != "command" || ours[0].Timeout != 10 {
			t.Errorf("%s: qtask entries %+v; want one, timeout 10 (seconds)", ev, ours)
		}
	}
	if len(h["UserPromptSubmit"]) != 2 || h["UserPromptSubmit"][0].Hooks[0].Command != "my-own-hook <&>" {
		t.Errorf("the user's own UserPromptSubmit hook moved or went: %+v", h["UserPromptSubmit"])
	}
	if !strings.HasPrefix(added, "{\n  \"permissions\"") || !strings.HasSuffix(added, "  \"env\": {\n    \"FOO\": \"1\"\n  }\n}\n") {
		t.Errorf("the user's keys were reordered:\n%s", added)
	}
	if again := mustAdd(t, hooks.Claude, added, cmdClaude, 0); again != added {
		t.Errorf("a second install changed the file:\n%s", Diff("settings.json", []byte(added), []byte(again)))
	}
	removed, err := Remove(hooks.Claude, []byte(added))
	if err != nil || string(removed) != userSettings {
		t.Errorf("uninstall left (err %v):\n%s", err, Diff("settings.json", []byte(userSettings), removed))
	}
	// Another agent's entries are not Claude's to remove.
	if other, _ := Remove(hooks.Qwen, []byte(added)); string(other) != added {
		t.Errorf("removing qwen's hooks changed Claude's:\n%s", Diff("settings.json", []byte(added), other))
	}
}

func TestAddReplacesAnOlderEntry(t *testing.T) {
	old := mustAdd(t, hooks.Qwen, "", "'/old path/qtask' agent hook qwen", 0)
	updated := mustAdd(t, hooks.Qwen, old, "/new/qtask agent hook qwen", 5*time.Minute)
	h := decodeHooks(t, updated)
	for _, ev := range hooks.Qwen.Events() {
		if len(h[ev]) != 1 || len(h[ev][0].Hooks) != 1 || !strings.HasPrefix(h[ev][0].Hooks[0].Command, "/new/qtask agent hook qwen") {
			t.Errorf("%s after re-install: %+v; want the new entry only", ev, h[ev])
		}
	}
	if stop := h["Stop"][0].Hooks[0]; stop.Command != "/new/qtask agent hook qwen --hold 5m0s" || stop.Timeout != 310 {
		t.Errorf("qwen Stop with a hold: %+v; want --hold 5m0s and a timeout of 310 seconds", stop)
	}
	if removed, _ := Remove(hooks.Qwen, []byte(updated)); string(removed) != "{}\n" {
		t.Errorf("uninstall of a fresh install left %s", removed)
	}
}

// TestAddRouteMatchesTaskStop: the routing hook sees Claude's Bash and
// TaskStop calls; an older install's hook, for Bash alone, is replaced by a
// re-install, and a current one is left as it is, byte for byte.
func TestAddRouteMatchesTaskStop(t *testing.T) {
	matchers := func(settings string) []string {
		var v struct {
			Hooks map[string][]struct{ Matcher string }
		}
		if err := json.Unmarshal([]byte(settings), &v); err != nil {
			t.Fatal(err)
		}
		var m []string
		for _, g := range v.Hooks["PreToolUse"] {
			m = append(m, g.Matcher)
		}
		return m
	}
	routed, err := AddRoute(hooks.Claude, []byte(userSettings), cmdClaude)
	if err != nil {
		t.Fatal(err)
	}
	if m := matchers(string(routed)); len(m) != 1 || m[0] != "Bash|TaskStop" {
		t.Fatalf("the routing hook's matchers: %q; want Bash|TaskStop", m)
	}
	if again, _ := AddRoute(hooks.Claude, routed, cmdClaude); string(again) != string(routed) {
		t.Errorf("a second install changed the settings:\n%s", again)
	}
	older := strings.Replace(string(routed), `"Bash|TaskStop"`, `"Bash"`, 1)
	updated, err := AddRoute(hooks.Claude, []byte(older), cmdClaude)
	if m := matchers(string(updated)); err != nil || len(m) != 1 || m[0] != "Bash|TaskStop" {
		t.Errorf("re-install over an older routing hook: matchers %q (%v); want Bash|TaskStop alone", m, err)
	}
}

func TestGeminiEnablesHooksAndUndoesOnlyItsOwn(t *testing.T) {
	cmd := "/q/qtask agent hook gemini"
	added := mustAdd(t, hooks.Gemini, `{"security":{"auth":{"selectedType":"gemini-api-key"}}}`, cmd, 0)
	var v struct {
		HooksConfig struct{ Enabled bool } `json:"hooksConfig"`
	}
	json.Unmarshal([]byte(added), &v)
	h := decodeHooks(t, added)
	if !v.HooksConfig.Enabled || h["AfterAgent"][0].Hooks[0].Timeout != 10000 || h["BeforeAgent"][0].Hooks[0].Name != "qtask" {
		t.Errorf("gemini install: %s\nwant hooksConfig.enabled, timeouts in ms, named entries", added)
	}
	if again := mustAdd(t, hooks.Gemini, added, cmd, 0); again != added {
		t.Errorf("a second gemini install changed the file:\n%s", Diff("s", []byte(added), []byte(again)))
	}
	removed, _ := Remove(hooks.Gemini, []byte(added))
	if want := "{\n  \"security\": {\n    \"auth\": {\n      \"selectedType\": \"gemini-api-key\"\n    }\n  }\n}\n"; string(removed) != want {
		t.Errorf("gemini uninstall left:\n%s", removed)
	}
	// hooks enabled by the user stay enabled.
	mine := "{\n  \"hooksConfig\": {\n    \"enabled\": true\n  }\n}\n"
	removed, _ = Remove(hooks.Gemini, []byte(mustAdd(t, hooks.Gemini, mine, cmd, 0)))
	if string(removed) != mine {
		t.Errorf("uninstall turned off hooks the user had enabled:\n%s", removed)
	}
	// hooks disabled by the user are disabled again: gemini's default is
	// on, so a key taken out would leave them on.
	off := "{\n  \"hooksConfig\": {\n    \"enabled\": false\n  }\n}\n"
	onAgain := mustAdd(t, hooks.Gemini, mustAdd(t, hooks.Gemini, off, cmd, 0), cmd, time.Minute)
	if removed, _ = Remove(hooks.Gemini, []byte(onAgain)); string(removed) != off {
		t.Errorf("uninstall left hooks on that the user had turned off:\n%s", removed)
	}
}

func TestAddRefusesWhatItCannotMerge(t *testing.T) {
	for _, bad := range []string{"[]", "{", `{"hooks": []}`, `{"hooks": {"Stop": {}}}`, "// c\n{}", "{} {}"} {
		if out, err := Add(hooks.Claude, []byte(bad), cmdClaude, 0); err == nil {
			t.Errorf("Add into %q succeeded: %s", bad, out)
		}
	}
}

func TestDiff(t *testing.T) {
	before := "{\n  \"a\": 1,\n  \"b\": 2\n}\n"
	after := "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n"
	want := "--- s\n+++ s\n@@ -1,4 +1,5 @@\n {\n   \"a\": 1,\n-  \"b\": 2\n+  \"b\": 2,\n+  \"c\": 3\n }\n"
	if got := Diff("s", []byte(before), []byte(after)); got != want {
		t.Errorf("Diff:\n%s\nwant:\n%s", got, want)
	}
	if got := Diff("s", []byte(before), []byte(before)); got != "" {
		t.Errorf("Diff of equal texts = %q", got)
	}
}

func TestHookCommandQuotes(t *testing.T) {
	if got := HookCommand("/usr/bin/qtask", hooks.Claude); got != "/usr/bin/qtask agent hook claude" {
		t.Errorf("HookCommand = %q", got)
	}
	weird := HookCommand("/my dir/it's/qtask", hooks.Gemini)
	if weird != `'/my dir/it'\''s/qtask' agent hook gemini` {
		t.Errorf("HookCommand = %q", weird)
	}
	e := newObject()
	e.set("command", weird)
	if !isOurs(e, hooks.Gemini) || isOurs(e, hooks.Claude) {
		t.Errorf("%s not recognised as qtask's gemini hook (and only gemini's)", weird)
	}
	for _, other := range []string{"qtask agent hook", "myqtask agent hook gemini", "/bin/sh -c 'qtask agent hook gemini'", "qtask agent inbox gemini"} {
		e.set("command", other)
		if isOurs(e, hooks.Gemini) {
			t.Errorf("%q taken for qtask's hook", other)
		}
	}
}

// FuzzAddRemove: whatever settings object qtask is given, install keeps it
// parseable, a second install changes nothing, and uninstall gives back the
// original (as qtask formats it) when it held no qtask hooks of its own.
func FuzzAddRemove(f *testing.F) {
	f.Add(userSettings)
	f.Add(`{"hooks":{"Stop":[{"matcher":"x","hooks":[{"type":"command","command":"a"},{"type":"command","command":"b"}]}]},"z":[1,2.50,null,true,"<&>"]}`)
	f.Add(`{"hooksConfig":{"enabled":false,"x":1}}`)
	f.Add(`{"hooks":{"AfterAgent":[{"hooks":[]},{}]}}`)
	f.Fuzz(func(t *testing.T, settings string) {
		root, err := parseObject([]byte(settings))
		if err != nil {
			return
		}
		for _, a := range hooks.Agents {
			cmd := "/q/qtask agent hook " + a.Name
			added, err := Add(a, []byte(settings), cmd, time.Minute)
			if err != nil {
				return // a "hooks" that is not an object of lists: refused, fine
			}
			if _, err := parseObject(added); err != nil {
				t.Fatalf("%s: install wrote unparseable settings: %v\n%s", a.Name, err, added)
			}
			again, err := Add(a, added, cmd, time.Minute)
			if err != nil || string(again) != string(added) {
				t.Fatalf("%s: a second install changed the file (%v):\n%s", a.Name, err, Diff("s", added, again))
			}
			if strings.Contains(settings, "agent hook") || strings.Contains(settings, "hooksConfig") && a.Name == "gemini" ||
				hasEmptyHooks(root, a) {
				continue // held qtask's own entries, gemini's switch, or an empty "hooks" or event list (see Remove)
			}
			if same, err := Remove(a, []byte(settings)); err != nil || string(same) != settings {
				t.Fatalf("%s: uninstall without an install changed the file (%v):\n%s", a.Name, err, Diff("s", []byte(settings), same))
			}
			removed, err := Remove(a, added)
			if err != nil || string(removed) != string(encode(root)) {
				t.Fatalf("%s: uninstall (%v) did not give back the original:\n%s", a.Name, err, Diff("s", encode(root), removed))
			}
		}
	})
}

// hasEmptyHooks reports whether settings hold an empty "hooks" or an empty
// list for one of the agent's events.
func hasEmptyHooks(root *object, a hooks.Agent) bool {
	h, err := root.child("hooks", false)
	if err != nil || h == nil {
		return false
	}
	if len(h.keys) == 0 {
		return true
	}
	for _, ev := range a.Events() {
		if groups, err := groupsOf(h, ev); err == nil && groups != nil && len(groups) == 0 {
			return true
		}
	}
	return false
}

// stopCommands are the commands of qtask's entries on Claude's Stop.
func stopCommands(t *testing.T, settings string) []string {
	t.Helper()
	var cmds []string
	for _, g := range decodeHooks(t, settings)["Stop"] {
		for _, e := range g.Hooks {
			cmds = append(cmds, e.Command)
		}
	}
	return cmds
}

// Claude's asyncRewake waiter is armed only without a hold: with one, the
// two Stop hooks raced for the notification the held turn was waiting for
// (TestRealAgentsHearTheirTasksEnd/claude lost it about one run in four).
// Re-installing with or without a hold swaps the entries over.
func TestRewakeOnlyWithoutHold(t *testing.T) {
	plain := mustAdd(t, hooks.Claude, "", cmdClaude, 0)
	if got := stopCommands(t, plain); len(got) != 2 || got[1] != cmdClaude+" --rewake 59m0s" {
		t.Fatalf("Stop without a hold: %q; want the hook and the rewake waiter", got)
	}
	held := mustAdd(t, hooks.Claude, plain, cmdClaude, time.Minute)
	if got := stopCommands(t, held); len(got) != 1 || got[0] != cmdClaude+" --hold 1m0s" {
		t.Fatalf("Stop with a hold: %q; want the held hook alone", got)
	}
	if back := mustAdd(t, hooks.Claude, held, cmdClaude, 0); back != plain {
		t.Errorf("re-installing without the hold:\n%s", Diff("settings.json", []byte(plain), []byte(back)))
	}
}

// qwen's and gemini's guard on their shell tool's own background option
// is one more hook of qtask's, for the shell tool only; an install with
// --allow-own-background over one without takes it out and nothing else,
// a hook of the user's on the same event stays, and uninstall removes it.
// Claude has none (its background calls are routed).
func TestGuardOnlyForQwenAndGemini(t *testing.T) {
	const own = `{"hooks":{"PreToolUse":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"my-check"}]}]}}`
	for _, a := range []hooks.Agent{hooks.Qwen, hooks.Gemini} {
		command := "/usr/local/bin/qtask agent hook " + a.Name
		plain := mustAdd(t, a, own, command, 0)
		guarded, err := AddGuard(a, []byte(plain), command)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Hooks map[string][]struct {
				Matcher string
				Hooks   []hookEntry
			}
		}
		if err := json.Unmarshal(guarded, &doc); err != nil {
			t.Fatal(err)
		}
		groups := doc.Hooks[a.GuardEvent()]
		last := groups[len(groups)-1]
		if last.Matcher != "run_shell_command" || len(last.Hooks) != 1 || last.Hooks[0].Command != command {
			t.Errorf("%s: the guard is %+v, want qtask's hook for run_shell_command", a.Name, groups)
		}
		if again, _ := AddGuard(a, guarded, command); string(again) != string(guarded) {
			t.Errorf("%s: a second install changed the guard:\n%s", a.Name, Diff("settings.json", guarded, again))
		}
		if off, _ := RemoveGuard(a, guarded); string(off) != plain {
			t.Errorf("%s: --allow-own-background did not give back the install without the guard:\n%s", a.Name, Diff("settings.json", []byte(plain), off))
		}
		if gone, _ := Remove(a, guarded); !strings.Contains(string(gone), "my-check") || strings.Contains(string(gone), "qtask") {
			t.Errorf("%s: uninstall left:\n%s", a.Name, gone)
		}
	}
	if out, _ := AddGuard(hooks.Claude, []byte(userSettings), cmdClaude); string(out) != userSettings {
		t.Errorf("Claude got a guard:\n%s", out)
	}
}

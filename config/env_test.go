package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestEnvFrom(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	home := map[string]string{"HOME": "/home/u"}
	tests := []struct {
		name string
		vars map[string]string
		want Env
		// agentScopes is what AgentScopes must return: never the place.
		agentScopes []string
	}{
		{
			name: "HOME only",
			vars: home,
			want: Env{
				Home:     "/home/u",
				StateDir: "/home/u/.local/state/qtask", StateHome: "/home/u", StateHomeVar: "HOME",
				ConfigPath: "/home/u/.config/qtask/config.toml",
				Scope:      "default",
			},
		},
		{
			name: "XDG over HOME",
			vars: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/xdg/state", "XDG_CONFIG_HOME": "/xdg/config"},
			want: Env{
				Home:     "/home/u",
				StateDir: "/xdg/state/qtask", StateHome: "/xdg/state", StateHomeVar: "XDG_STATE_HOME",
				ConfigPath:    "/xdg/config/qtask/config.toml",
				XDGConfigHome: "/xdg/config",
				Scope:         "default",
			},
		},
		{
			name: "QTASK over XDG",
			vars: map[string]string{
				"HOME": "/home/u", "XDG_STATE_HOME": "/xdg/state", "XDG_CONFIG_HOME": "/xdg/config",
				"QTASK_STATE_DIR": "/q/state", "QTASK_CONFIG": "/q/qtask.toml",
			},
			want: Env{Home: "/home/u", StateDir: "/q/state", ConfigPath: "/q/qtask.toml", XDGConfigHome: "/xdg/config", Scope: "default"},
		},
		{
			name: "QTASK values cleaned",
			vars: map[string]string{"QTASK_STATE_DIR": "/q//state/", "QTASK_CONFIG": "/q/./c.toml"},
			want: Env{StateDir: "/q/state", ConfigPath: "/q/c.toml", Scope: "default"},
		},
		{
			name: "relative QTASK values made absolute",
			vars: map[string]string{"QTASK_STATE_DIR": "state", "QTASK_CONFIG": "./c.toml"},
			want: Env{
				StateDir:   filepath.Join(wd, "state"),
				ConfigPath: filepath.Join(wd, "c.toml"),
				Scope:      "default",
			},
		},
		{
			name: "relative XDG values ignored",
			vars: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "xdg/state", "XDG_CONFIG_HOME": "~/.config"},
			want: Env{
				Home:     "/home/u",
				StateDir: "/home/u/.local/state/qtask", StateHome: "/home/u", StateHomeVar: "HOME",
				ConfigPath: "/home/u/.config/qtask/config.toml",
				Scope:      "default",
			},
		},
		{
			name: "state dir without HOME leaves config path empty",
			vars: map[string]string{"QTASK_STATE_DIR": "/q/state"},
			want: Env{StateDir: "/q/state", Scope: "default"},
		},
		{
			name: "XDG state without HOME",
			vars: map[string]string{"XDG_STATE_HOME": "/xdg/state", "XDG_CONFIG_HOME": "/xdg/config"},
			want: Env{StateDir: "/xdg/state/qtask", StateHome: "/xdg/state", StateHomeVar: "XDG_STATE_HOME", ConfigPath: "/xdg/config/qtask/config.toml", XDGConfigHome: "/xdg/config", Scope: "default"},
		},
		{
			name: "inside tmux",
			vars: map[string]string{
				"HOME": "/home/u", "TMUX": "/tmp/tmux-1000/default,1234,0", "TMUX_PANE": "%3",
			},
			want: Env{
				Home:     "/home/u",
				StateDir: "/home/u/.local/state/qtask", StateHome: "/home/u", StateHomeVar: "HOME",
				ConfigPath: "/home/u/.config/qtask/config.toml",
				Tmux:       "/tmp/tmux-1000/default,1234,0",
				TmuxPane:   "%3",
				Scope:      "%3",
			},
		},
		{
			name: "QTASK_SCOPE over TMUX_PANE",
			vars: map[string]string{"HOME": "/home/u", "TMUX_PANE": "%3", "QTASK_SCOPE": "proj"},
			want: Env{
				Home:     "/home/u",
				StateDir: "/home/u/.local/state/qtask", StateHome: "/home/u", StateHomeVar: "HOME",
				ConfigPath:  "/home/u/.config/qtask/config.toml",
				TmuxPane:    "%3",
				Scope:       "proj",
				ChosenScope: "proj",
			},
			agentScopes: []string{"proj"},
		},
		{
			name: "socket and task id passed through",
			vars: map[string]string{"HOME": "/home/u", "QTASK_TMUX_SOCKET": "/run/qtask.sock", "TMUX_TMPDIR": "/run/tmux", "CLAUDE_CONFIG_DIR": "/cc"},
			want: Env{
				Home:     "/home/u",
				StateDir: "/home/u/.local/state/qtask", StateHome: "/home/u", StateHomeVar: "HOME",
				ConfigPath:      "/home/u/.config/qtask/config.toml",
				TmuxSocket:      "/run/qtask.sock",
				Scope:           "default",
				TmuxTmpdir:      "/run/tmux",
				ClaudeConfigDir: "/cc",
			},
		},
		{
			name: "agent mode",
			vars: map[string]string{"QTASK_STATE_DIR": "/q", "QTASK_AGENT": "1"},
			want: Env{StateDir: "/q", Scope: "default", Agent: true},
		},
		{
			name: "agent mode off",
			vars: map[string]string{"QTASK_STATE_DIR": "/q", "QTASK_AGENT": "0"},
			want: Env{StateDir: "/q", Scope: "default"},
		},
		{
			name:        "a Claude session is the scope, and the pane's is not an agent's",
			vars:        map[string]string{"QTASK_STATE_DIR": "/q", "TMUX_PANE": "%3", "CLAUDE_CODE_SESSION_ID": "c1", "QWEN_CODE_SESSION_ID": "q1"},
			want:        Env{StateDir: "/q", TmuxPane: "%3", Scope: "claude:c1", AgentSession: "claude:c1", ClaudeSessionID: "c1", QwenSessionID: "q1"},
			agentScopes: []string{"claude:c1"},
		},
		{
			name:        "a qwen session outside tmux",
			vars:        map[string]string{"QTASK_STATE_DIR": "/q", "QWEN_CODE_SESSION_ID": "q1"},
			want:        Env{StateDir: "/q", Scope: "qwen:q1", AgentSession: "qwen:q1", QwenSessionID: "q1"},
			agentScopes: []string{"qwen:q1"},
		},
		{
			name:        "a gemini hook in a pane",
			vars:        map[string]string{"QTASK_STATE_DIR": "/q", "TMUX_PANE": "%3", "GEMINI_SESSION_ID": "g1"},
			want:        Env{StateDir: "/q", TmuxPane: "%3", Scope: "gemini:g1", AgentSession: "gemini:g1"},
			agentScopes: []string{"gemini:g1"},
		},
		{
			name:        "QTASK_SCOPE wins over the agent's session",
			vars:        map[string]string{"QTASK_STATE_DIR": "/q", "QTASK_SCOPE": "review", "CLAUDE_CODE_SESSION_ID": "c1"},
			want:        Env{StateDir: "/q", Scope: "review", ChosenScope: "review", AgentSession: "claude:c1", ClaudeSessionID: "c1"},
			agentScopes: []string{"review", "claude:c1"},
		},
		{
			name: "agent mode off, spelled out",
			vars: map[string]string{"QTASK_STATE_DIR": "/q", "QTASK_AGENT": "false"},
			want: Env{StateDir: "/q", Scope: "default"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EnvFrom(lookup(tt.vars))
			if err != nil {
				t.Fatalf("EnvFrom: %v", err)
			}
			if scopes := got.AgentScopes(); !slices.Equal(scopes, tt.agentScopes) {
				t.Errorf("EnvFrom(…).AgentScopes() = %q, want %q", scopes, tt.agentScopes)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("EnvFrom =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestEnvFromNoStateDir(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
	}{
		{"nothing set", nil},
		{"only config set", map[string]string{"QTASK_CONFIG": "/c.toml", "XDG_CONFIG_HOME": "/xdg"}},
		{"relative HOME and XDG", map[string]string{"HOME": "home/u", "XDG_STATE_HOME": "state"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := EnvFrom(lookup(tt.vars))
			if err == nil {
				t.Fatalf("EnvFrom = %+v, want an error", env)
			}
			if !strings.Contains(err.Error(), "set QTASK_STATE_DIR") {
				t.Errorf("error %q does not say to set QTASK_STATE_DIR", err)
			}
		})
	}
}

func TestTmuxSocketFromTMUX(t *testing.T) {
	tests := []struct {
		tmux string
		want string
	}{
		{"", ""},
		{"/tmp/tmux-1000/default,1234,0", "/tmp/tmux-1000/default"},
		{"/tmp/sock", "/tmp/sock"},
		{",1,2", ""},
	}
	for _, tt := range tests {
		if got := (Env{Tmux: tt.tmux}).TmuxSocketFromTMUX(); got != tt.want {
			t.Errorf("TmuxSocketFromTMUX with TMUX=%q = %q, want %q", tt.tmux, got, tt.want)
		}
	}
}

// lookup returns a getenv that reads vars, so tests never depend on the
// real environment.
func lookup(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

package hooks

import (
	"encoding/json"
	"strings"

	"github.com/qtask/qtask/agent"
)

// backgroundCall is what Guard reads of a call of qwen-code's or
// gemini-cli's shell tool (run_shell_command): the command, the tool's own
// background option, and the directory the model asked for (qwen names it
// directory, gemini dir_path).
type backgroundCall struct {
	Command      string `json:"command"`
	IsBackground bool   `json:"is_background"`
	Directory    string `json:"directory"`
	DirPath      string `json:"dir_path"`
}

// Guard answers the pre-tool event of an agent whose shell tool qtask does
// not route (qwen-code's PreToolUse, gemini-cli's BeforeTool). A call that
// sets the tool's own background option (is_background) would start a
// process outside tmux that nobody sees, that dies with the agent, and
// whose end the model is never told: it is denied, with a reason that
// gives the model the qtask line that runs the same command as a task
// (qtask: how its shell runs qtask, see Options.Qtask). A deny grants nothing, so the
// agent's permission check is untouched: the line the model runs next is
// checked as any command. Any other call gets no answer. Both agents read
// a deny from the same top-level fields (decision "deny", reason), and
// give the model the reason as the call's error (measured:
// TestRealAgentOwnBackgroundIsDenied).
func (a Agent) Guard(in Input, qtask string) []byte {
	var call backgroundCall
	if in.ToolName != a.ShellTool || json.Unmarshal(in.ToolInput, &call) != nil || !call.IsBackground || strings.TrimSpace(call.Command) == "" {
		return nil
	}
	data, _ := json.Marshal(blockOutput{Decision: "deny", Reason: backgroundGuidance(call, qtask)}) // plain strings: cannot fail
	return append(data, '\n')
}

// backgroundGuidance is the reason a background call is denied with: why,
// and the line to run instead.
func backgroundGuidance(call backgroundCall, qtask string) string {
	line := qtask + " run --agent --bg"
	if dir := call.Directory + call.DirPath; dir != "" {
		line += " --cwd " + agent.ShellQuote(dir)
	}
	line += " -- " + agent.ShellQuote(call.Command)
	return "qtask: is_background is turned off here: a command started with it runs outside tmux, " +
		"where the user cannot see or stop it, it dies with this session, and you are not told when it ends. " +
		"Run the same command as a qtask task instead, with this exact command and is_background false:\n" +
		line + "\n" +
		"It returns at once with the task's id and output file. You will be told with a <task-notification> " +
		"when the task ends: do not poll it or start it again."
}

package shellhooks

import "strings"

// CommandOutput keeps what a pane's scrollback showed after command was
// typed at the prompt (its last echo), without the trailing blank screen
// rows capture-pane includes: the start of an adopted command's output.
func CommandOutput(scrollback, command string) string {
	lines := strings.Split(scrollback, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if end := commandLineEnd(lines, command); end >= 0 {
		lines = lines[end+1:]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// maxEchoRows bounds how many rows one echoed command line may span.
const maxEchoRows = 64

// commandLineEnd is the index of the row where the last echo of command
// ends, or -1. Rows are compared without blanks, so wrapping anywhere (by
// tmux or by the shell's line editor) does not matter. An echo starts at
// the end of a row (after the prompt) and must end exactly at the end of a
// row — output that merely mentions the command ("make -C lib" after
// "make") is not an echo — and rows after the first may begin with a
// continuation prompt ("> ", "for> ").
func commandLineEnd(lines []string, command string) int {
	want := squeeze(command)
	if want == "" {
		return -1
	}
	for i := len(lines) - 1; i >= 0; i-- {
		row := squeeze(stripRightPrompt(lines[i]))
		for k := range row {
			seen := row[k:]
			if !strings.HasPrefix(want, seen) {
				continue
			}
			for j := i; ; {
				if seen == want {
					return j
				}
				if j++; j >= len(lines) || j-i >= maxEchoRows {
					break
				}
				seen += squeeze(stripRightPrompt(stripContinuationPrompt(lines[j])))
				if !strings.HasPrefix(want, seen) {
					break
				}
			}
		}
	}
	return -1
}

// rightPromptGap is the run of spaces that separates a right-hand prompt
// (zsh's RPROMPT, "[10:32]") from the command line on the same row.
const rightPromptGap = "    "

// stripRightPrompt removes a short right-hand prompt after a wide gap.
func stripRightPrompt(row string) string {
	if i := strings.LastIndex(row, rightPromptGap); i > 0 && len(row)-i <= 48 {
		if tail := strings.TrimSpace(row[i:]); tail != "" && !strings.Contains(tail, " ") {
			return row[:i]
		}
	}
	return row
}

// squeeze drops all blanks.
func squeeze(s string) string { return strings.Join(strings.Fields(s), "") }

// stripContinuationPrompt removes a PS2-style prompt ("> ", "for> ",
// "quote> ") from the start of a row.
func stripContinuationPrompt(row string) string {
	word, rest, ok := strings.Cut(row, " ")
	if ok && strings.HasSuffix(word, ">") && !strings.ContainsAny(word[:len(word)-1], "<>|&;") {
		return rest
	}
	return row
}

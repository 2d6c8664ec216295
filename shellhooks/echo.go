package shellhooks

import "strings"

// OutputStart is the index of the first of lines (a pane's history and
// screen, as capture-pane prints them) that command printed: the one after
// the last echo of the command line, or 0 if there is none.
func OutputStart(lines []string, command string) int {
	trimmed := make([]string, len(lines))
	for i, l := range lines {
		trimmed[i] = strings.TrimRight(l, " ")
	}
	return commandLineEnd(trimmed, command) + 1
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

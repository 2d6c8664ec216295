package shellhooks

import (
	"strings"
	"testing"
)

// rows joins screen rows as capture-pane prints them.
func rows(r ...string) string { return strings.Join(r, "\n") + "\n" }

// commandOutput is the text of the lines from OutputStart on, as an
// adopted task's output file gets it: trailing blanks and blank rows at
// the end dropped.
func commandOutput(scrollback, command string) string {
	lines := strings.Split(strings.TrimSuffix(scrollback, "\n"), "\n")
	lines = lines[OutputStart(lines, command):]
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestOutputStart(t *testing.T) {
	const loop = "for i in $(seq 1 40); do echo line $i; sleep 0.1; done; (exit 3)"
	cases := []struct {
		name       string
		scrollback string
		command    string
		want       string
	}{
		{
			name:       "prompt, command and output",
			scrollback: rows("me@box:~/src$ make -j8", "cc -c a.c", "cc -c b.c", "", "", ""),
			command:    "make -j8",
			want:       rows("cc -c a.c", "cc -c b.c"),
		},
		{
			name:       "trailing spaces and blank screen rows dropped, indentation kept",
			scrollback: rows("$ ./gen.sh --all   ", "  file1   ", "file2  ", "   ", "", "      "),
			command:    "./gen.sh --all",
			want:       rows("  file1", "file2"),
		},
		{
			name:       "blank rows inside the output kept",
			scrollback: rows("$ ./report.sh", "", "total: 3", "", "done"),
			command:    "./report.sh",
			want:       rows("", "total: 3", "", "done"),
		},
		{
			name:       "earlier run of the same command in scrollback",
			scrollback: rows("$ ./test.sh -v", "old run", "FAIL", "$ ls", "a b", "$ ./test.sh -v", "new run", "ok"),
			command:    "./test.sh -v",
			want:       rows("new run", "ok"),
		},
		{
			name:       "command wrapped over two rows at a space",
			scrollback: rows("vm# for i in $(seq 1 40); do echo line $i; sleep 0.1; done;", "(exit 3)", "line 1", "line 2"),
			command:    loop,
			want:       rows("line 1", "line 2"),
		},
		{
			name:       "command wrapped over two rows inside a word",
			scrollback: rows("vm# for i in $(seq 1 40); do echo li", "ne $i; sleep 0.1; done; (exit 3)", "line 1", "line 2"),
			command:    loop,
			want:       rows("line 1", "line 2"),
		},
		{
			name:       "command wrapped over three rows",
			scrollback: rows("$ python3 -c 'import time; ", "print(1); time.sleep(5)", "; print(2)'", "1"),
			command:    "python3 -c 'import time; print(1); time.sleep(5); print(2)'",
			want:       rows("1"),
		},
		{
			name:       "output rows that mention a short command are not its echo",
			scrollback: rows("me@box:~/src$ make", "make -C lib", "make[1]: Entering directory '/src/lib'", "cc -o app main.c"),
			command:    "make",
			want:       rows("make -C lib", "make[1]: Entering directory '/src/lib'", "cc -o app main.c"),
		},
		{
			name:       "file names containing the command",
			scrollback: rows("$ ls", "Makefile", "calls.go", "main.go"),
			command:    "ls",
			want:       rows("Makefile", "calls.go", "main.go"),
		},
		{
			name:       "wrapped within its first characters",
			scrollback: rows("vm# for i in $(s", "eq 1 40); do echo line $i; sleep 0.1; done; (exit 3)", "line 1", "line 2"),
			command:    "for i in $(seq 1 40); do echo line $i; sleep 0.1; done; (exit 3)",
			want:       rows("line 1", "line 2"),
		},
		{
			name:       "continuation prompts",
			scrollback: rows("$ for i in 1 2", "> do echo $i", "> done", "1", "2"),
			command:    "for i in 1 2\ndo echo $i\ndone",
			want:       rows("1", "2"),
		},
		{
			name:       "right-hand prompt on the command row",
			scrollback: rows("% make -j8                                   [10:32]", "cc -c a.c"),
			command:    "make -j8",
			want:       rows("cc -c a.c"),
		},
		{
			name:       "command typed with other spacing than recorded",
			scrollback: rows("$ make   -j8", "cc -c a.c"),
			command:    "make -j8",
			want:       rows("cc -c a.c"),
		},
		{
			// A heuristic: a row holding the command's first 16 characters
			// (spaces ignored) is only taken for the echo if the rows from
			// there spell out the whole command, so an output row that
			// merely mentions the command's start is output.
			name: "output row mentioning the command's start",
			scrollback: rows("$ ./build.sh --release --target=arm64", "warning: ./build.sh --release is deprecated",
				"building arm64", "./build.sh --release: done"),
			command: "./build.sh --release --target=arm64",
			want:    rows("warning: ./build.sh --release is deprecated", "building arm64", "./build.sh --release: done"),
		},
		{
			name:       "command not in scrollback keeps everything",
			scrollback: rows("old stuff", "  more  ", "", ""),
			command:    "./deploy.sh --prod",
			want:       rows("old stuff", "  more"),
		},
		{
			name:       "empty command keeps everything",
			scrollback: rows("$ ", "out"),
			command:    "",
			want:       rows("$", "out"),
		},
		{
			name:       "whitespace-only command keeps everything",
			scrollback: rows("$ ", "out"),
			command:    " \t\n",
			want:       rows("$", "out"),
		},
		{
			name:       "no output yet",
			scrollback: rows("$ ./serve --port 8080", "", "", ""),
			command:    "./serve --port 8080",
			want:       "",
		},
		{
			name:       "empty scrollback",
			scrollback: "",
			command:    "make -j8",
			want:       "",
		},
		{
			name:       "blank scrollback",
			scrollback: rows("", "   ", ""),
			command:    "make -j8",
			want:       "",
		},
	}
	for _, tc := range cases {
		if got := commandOutput(tc.scrollback, tc.command); got != tc.want {
			t.Errorf("%s: the adopted task's output starts with\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

func TestCommandLineEnd(t *testing.T) {
	cases := []struct {
		name    string
		lines   []string
		command string
		want    int
	}{
		{"one row", []string{"$ make -j8", "cc"}, "make -j8", 0},
		{"last of two echoes", []string{"$ make -j8", "cc", "$ make -j8", "cc"}, "make -j8", 2},
		{"wrapped", []string{"x", "$ for i in $(seq 1 40); do echo line $i;", " sleep 0.1; done", "line 1"},
			"for i in $(seq 1 40); do echo line $i; sleep 0.1; done", 2},
		{"absent", []string{"a", "b"}, "make -j8", -1},
		{"start seen but command incomplete at the end of scrollback", []string{"$ for i in $(seq 1 40); do"}, "for i in $(seq 1 40); do echo $i; done", -1},
		{"empty command", []string{"a", ""}, "", -1},
		{"no rows", nil, "make -j8", -1},
	}
	for _, tc := range cases {
		if got := commandLineEnd(tc.lines, tc.command); got != tc.want {
			t.Errorf("%s: command %q found ending at row %d, want %d in %q", tc.name, tc.command, got, tc.want, tc.lines)
		}
	}
}

// Command gen writes the byte patterns of real terminal programs' progress
// displays, for recording the oracle corpus (see ../oracle/record.sh). It
// imitates what each program writes, frame by frame, without its timing.
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen CASE")
		os.Exit(2)
	}
	gens := map[string]func(){
		"curl-meter":   curlMeter,
		"pv-meter":     pvMeter,
		"tqdm":         tqdm,
		"tqdm-nested":  tqdmNested,
		"rich-live":    richLive,
		"npm-spinner":  npmSpinner,
		"apt-fancy":    aptFancy,
		"unicode":      unicode,
		"tabs":         tabs,
		"tabstops":     tabStops,
		"wrap":         wrap,
		"erase":        erase,
		"scroll":       scroll,
		"insert":       insert,
		"clear":        clearScreen,
		"fullscreen":   fullscreen,
		"prompt-erase": promptErase,
	}
	g, ok := gens[os.Args[1]]
	if !ok {
		fmt.Fprintln(os.Stderr, "gen: unknown case", os.Args[1])
		os.Exit(2)
	}
	g()
}

var out = os.Stdout

func p(format string, a ...any) { fmt.Fprintf(out, format, a...) }

func bar(frac float64, width int) string {
	n := int(frac * float64(width))
	return strings.Repeat("█", n) + strings.Repeat(" ", width-n)
}

// curlMeter: curl's default meter, a header then one line redrawn with CR.
func curlMeter() {
	p("  %% Total    %% Received %% Xferd  Average Speed   Time    Time     Time  Current\n")
	p("                                 Dload  Upload   Total   Spent    Left  Speed\n")
	for i := 0; i <= 27; i++ {
		p("\r%3d  100M  %3d %4dM    0     0  %4dk      0  0:00:27  0:00:%02d  0:00:%02d %4dk", i*100/27, i*100/27, i*100/27, 3700, i, 27-i, 3600+i)
	}
	p("\n")
}

// pvMeter: pv writes its bar to stderr with CR and no newline until done.
func pvMeter() {
	for i := 0; i <= 10; i++ {
		p("\r%3dMiB 0:00:%02d [%3dMiB/s] [%s] %3d%%", i*10, i, 10, bar(float64(i)/10, 40), i*10)
	}
	p("\n")
}

// tqdm: a single bar, redrawn with CR, closed with a newline.
func tqdm() {
	p("starting\n")
	for i := 0; i <= 100; i += 5 {
		p("\r%3d%%|%s| %d/100 [00:%02d<00:%02d, 2.00it/s]", i, bar(float64(i)/100, 30), i, i/5, 20-i/5)
	}
	p("\n")
	p("done\n")
}

// tqdmNested: tqdm's nested bars draw the inner bar on the next line and
// go back up with ESC[A, then CR.
func tqdmNested() {
	for o := 0; o <= 3; o++ {
		p("\router: %3d%%|%s| %d/3", o*100/3, bar(float64(o)/3, 20), o)
		for i := 0; i <= 4; i++ {
			p("\n\rinner: %3d%%|%s| %d/4\x1b[A\r", i*25, bar(float64(i)/4, 20), i)
		}
	}
	p("\n\n")
	p("finished\n")
}

// richLive: rich's live progress: hide cursor, draw, then for each frame
// erase the lines it drew with CR ESC[2K ESC[1A ESC[2K and draw again.
func richLive() {
	p("\x1b[?25l")
	lines := 0
	for f := 0; f <= 12; f++ {
		if f%4 == 0 && f > 0 {
			// A log line printed above the live display.
			p("\r\x1b[2K")
			for range lines - 1 {
				p("\x1b[1A\x1b[2K")
			}
			p("[12:00:%02d] step %d complete\n", f, f/4)
			lines = 0
		}
		if lines > 0 {
			p("\r\x1b[2K")
			for range lines - 1 {
				p("\x1b[1A\x1b[2K")
			}
		}
		p("Downloading \x1b[38;5;197m%s\x1b[0m %3d%%\n", bar(float64(f)/12, 40), f*100/12)
		p("Processing  \x1b[38;5;197m%s\x1b[0m %3d%%", bar(float64(f)/24, 40), f*100/24)
		lines = 2
	}
	p("\x1b[?25h\n")
}

// npmSpinner: npm's spinner goes to column 1, erases the line and draws
// the next glyph; at the end it erases the spinner and prints the result.
func npmSpinner() {
	glyphs := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
	for i := 0; i < 40; i++ {
		p("\x1b[1G\x1b[0K%c", glyphs[i%len(glyphs)])
	}
	p("\x1b[1G\x1b[0K")
	p("\nadded 12 packages in 2s\n")
	for i := 0; i < 5; i++ {
		p("\x1b[1G\x1b[0K%c", glyphs[i%len(glyphs)])
	}
	p("\x1b[1G\x1b[0K")
}

// aptFancy: Dpkg::Progress-Fancy reserves the last row with a scroll
// region and draws the status there with save/restore cursor.
func aptFancy() {
	p("Reading package lists... Done\n")
	p("\n\x1b7\x1b[0;23r\x1b8\x1b[1A")
	for i := 1; i <= 40; i++ {
		p("Unpacking pkg%02d (1.0-%d) ...\n", i, i)
		p("\x1b7\x1b[24;0f\x1b[42m\x1b[30mProgress: [%3d%%]\x1b[49m\x1b[39m [%s] \x1b8", i*100/40, strings.Repeat("#", i*60/40/1)[:min(i*60/40, 60)]+strings.Repeat(".", 60-min(i*60/40, 60)))
	}
	p("\x1b7\x1b[0;24r\x1b8\x1b[1A\x1b[J")
	p("Processing triggers for man-db ...\n")
}

func unicode() {
	p("日本語のテキスト: 東京 大阪\n")
	p("emoji: 🎉 🚀 ✨ done\n")
	p("combining: e\u0301 a\u0308 n\u0303 o\u0302\n")
	p("mixed width: ab日本cd\rXY\n")
	p("wide at edge: %s日本\n", strings.Repeat("x", 79))
	p("overwrite half: 日本語\r\x1b[1Cz\n")
}

func tabs() {
	p("a\tb\tc\td\n")
	p("name\tsize\tdate\n")
	p("long-file-name.txt\t12\t2024-01-01\n")
	p("\tindented\n")
	p("x\t\ty\n")
	p("over\twrite\r\x1b[6Cabc\n")
	// CHT, which tmux ignores, and CBT, which it does not.
	p("cht\x1b[Ione\x1b[2Itwo\n")
	p("abcdefghij\tk\x1b[Z\x1b[ZB\x1b[3ZC\n")
}

// tabStops: text laid out with tabs after `tabs -4` (record.sh runs that
// first, and it leaves spaces on its row), and after all stops are
// cleared, where a tab goes to the last column. Only a tab to a multiple
// of 8 lands where a reader of the file puts it.
func tabStops() {
	p("\n")
	p("x\ty\x1b[41G\tz\n")
	p("abcdefg\tq\n")
	p("\t\tw\tv\n")
	p("\x1b[3ga\tb\n")
}

func wrap() {
	p("%s\n", strings.Repeat("0123456789", 25))
	p("%s", strings.Repeat("abcdefghij", 8))
	p("\n")
	p("%s\rSTART\n", strings.Repeat("z", 100))
}

func erase() {
	p("keep this line\n")
	p("erase to end\x1b[5D\x1b[K!\n")
	p("erase start\x1b[1K.\n")
	p("whole line\x1b[2K\rrewritten\n")
	p("chars ECH abcdef\x1b[6D\x1b[3X\n")
	p("pending cr at end\r")
}

func scroll() {
	for i := 1; i <= 30; i++ {
		p("line %d\n", i)
	}
	p("\x1b[5;10r\x1b[10;1H")
	for i := 1; i <= 8; i++ {
		p("region %d\n", i)
	}
	p("\x1b[r\x1b[24;1H")
	p("\x1bMreverse\n")
	p("\x1b[2Sscrolled up\n")
	p("after\n")
}

func insert() {
	p("abcdef\x1b[3D\x1b[2@XY\n")
	p("abcdef\x1b[4D\x1b[2P\n")
	p("one\ntwo\nthree\n\x1b[2A\x1b[L")
	p("inserted\n\n\n")
	p("four\nfive\x1b[1A\x1b[M")
	p("\n\n")
}

func clearScreen() {
	for i := 1; i <= 10; i++ {
		p("before clear %d\n", i)
	}
	p("\x1b[H\x1b[2J")
	p("after clear\n")
	p("more\n")
}

// fullscreen: a vim-like program on the alternate screen.
func fullscreen() {
	p("before\n")
	p("\x1b[?1049h\x1b[H\x1b[2J")
	for i := 1; i <= 23; i++ {
		p("\x1b[%d;1H~", i)
	}
	p("\x1b[1;1Htcpmux\t1/tcp\t# TCP port service multiplexer")
	p("\x1b[24;1H:q")
	p("\x1b[?1049l")
	p("after\n")
}

// promptErase: less's ':' prompt and a spinner erased just before exit.
func promptErase() {
	p("result line\n")
	p(":")
	p("\r\x1b[K")
	p("⠙")
	p("\r\x1b[K")
}

package shellword

import "testing"

// benchCommands are short commands of the kinds the rules see: what
// `qtask run` and an agent's shell tool hand them.
var benchCommands = []string{
	"npm run dev &",
	"make -j8 test 2>&1 | tee log",
	"cd web && npm run build",
	`bash -c "npm run dev &"`,
	"cat <<EOF\n&\nEOF",
}

// BenchmarkLastCommand is the per-command cost of the trailing-'&' rule's
// reading (docs/BENCHMARKS.md compares it with a full shell parser).
func BenchmarkLastCommand(b *testing.B) {
	for b.Loop() {
		for _, c := range benchCommands {
			LastCommand(c)
		}
	}
}

// BenchmarkFirstCommand is the per-command cost of the leading-sleep
// rule's reading.
func BenchmarkFirstCommand(b *testing.B) {
	for b.Loop() {
		for _, c := range benchCommands {
			FirstCommand(c)
		}
	}
}

package tasks

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tmux"
)

// BenchmarkPushStatus is what keeping the status segment costs a task's
// start or end (the wrapper pushes it there), against real tmux servers:
// "changed" flips a running count before each push, so every push sets the
// option on each server that shows the segment; "unchanged" pushes the
// value the last push set, which the memo skips. "servers=2" has a second
// server that loaded the plugin (RefreshStatus) beside the task's own.
func BenchmarkPushStatus(b *testing.B) {
	tmuxBin := testenv.NeedProgram(b, "tmux")
	for _, servers := range []int{1, 2} {
		for _, changed := range []bool{true, false} {
			name := map[bool]string{true: "changed", false: "unchanged"}[changed]
			b.Run(fmt.Sprintf("servers=%d/%s", servers, name), func(b *testing.B) {
				dir := b.TempDir()
				s, err := OpenStore(filepath.Join(dir, "state"))
				if err != nil {
					b.Fatal(err)
				}
				var all []tmux.Server
				for i := range servers {
					sock := filepath.Join(dir, fmt.Sprint("s", i))
					if out, err := exec.Command(tmuxBin, "-S", sock, "-f", "/dev/null", "new-session", "-d", "--", "sleep", "600").CombinedOutput(); err != nil {
						b.Fatalf("tmux: %v %s", err, out)
					}
					b.Cleanup(func() { exec.Command(tmuxBin, "-S", sock, "kill-server").Run() })
					all = append(all, tmux.NewSocketServer(sock))
				}
				const format = "⏵{running} ✗{failed}"
				for _, server := range all[1:] {
					if err := s.RefreshStatus(server, format); err != nil {
						b.Fatal(err)
					}
				}
				r := &record{Task: Task{ID: "bench0001"}, StatusFormat: format, TmuxServer: all[0]}
				s.pushStatus(r)
				b.ResetTimer()
				for i := range b.N {
					if changed {
						if i%2 == 0 {
							s.statusLine().Start("bench0002")
						} else {
							s.statusLine().Unstart("bench0002")
						}
					}
					s.pushStatus(r)
				}
			})
		}
	}
}

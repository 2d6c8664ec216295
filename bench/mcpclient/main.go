// Command mcpclient is the client side of bench/mcp.sh: it starts `qtask
// mcp` (the binary given) with the official Go SDK's client over stdio,
// calls task_status on one task again and again, and reports the per-call
// latency and what the server process holds (RSS, threads, open fds)
// after the first batch and at the end, so growth shows.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	qtask := flag.String("qtask", "qtask", "the qtask binary")
	id := flag.String("id", "", "the task to ask about")
	timed := flag.Int("timed", 1000, "calls to time")
	total := flag.Int("total", 10000, "calls in all")
	flag.Parse()
	if err := run(*qtask, *id, *timed, *total); err != nil {
		fmt.Fprintln(os.Stderr, "mcpclient:", err)
		os.Exit(1)
	}
}

func run(qtask, id string, timed, total int) error {
	ctx := context.Background()
	cmd := exec.Command(qtask, "mcp")
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	call := func() (time.Duration, error) {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "task_status", Arguments: map[string]any{"task_id": id}})
		if err == nil && res.IsError {
			err = fmt.Errorf("task_status: %v", res.Content)
		}
		return time.Since(start), err
	}
	lat := make([]time.Duration, 0, timed)
	for range timed {
		d, err := call()
		if err != nil {
			return err
		}
		lat = append(lat, d)
	}
	slices.Sort(lat)
	fmt.Printf("task_status over stdio, %d sequential calls: median %v, p95 %v, max %v\n",
		timed, lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*95/100].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	pid := cmd.Process.Pid
	first := usage(pid)
	for range total - timed {
		if _, err := call(); err != nil {
			return err
		}
	}
	fmt.Printf("server after %d calls: %s\nserver after %d calls: %s\n", timed, first, total, usage(pid))
	return nil
}

// usage is the process's resident memory, threads and open fds.
func usage(pid int) string {
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	var rss, threads string
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			threads = strings.TrimSpace(v)
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return fmt.Sprintf("RSS %s, %s threads, %d open fds", rss, threads, len(fds))
}

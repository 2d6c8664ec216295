// Command sockspy is a test's stand-in for a program another local user
// runs: it listens on the unix socket named by its argument, accepts every
// connection, never answers, and copies whatever it receives to its
// standard output, for the test to see what reached it.
package main

import (
	"fmt"
	"net"
	"os"
	"sync"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sockspy SOCKET")
		os.Exit(2)
	}
	ln, err := net.Listen("unix", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var out sync.Mutex
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				out.Lock()
				os.Stdout.Write(buf[:n])
				out.Unlock()
				if err != nil {
					return // the connection is left open: nothing is ever answered
				}
			}
		}()
	}
}

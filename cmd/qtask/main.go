// Command qtask runs shell commands as background tasks in tmux windows.
package main

import "os"

func main() { os.Exit(Main()) }

// Package capture gets a task's pane output and writes its output file.
//
// A wrapper's capture (Start) attaches the pane's pipe-pane to a shell
// handshake and reads the pipe itself, taken out of that shell, passed
// over by a helper, or through a cat, replacing a pipe that ends or
// stalls and marking the gap; an adopted pane's capture (OpenAdopted)
// reads the pipe it is given. Either way the raw bytes go through the
// screen model (tasks/render) into the capped output file (tasks/capped),
// over a spool that rides out a full disk, until the end marker the
// wrapper prints has passed: only then is the file complete. A foreground
// caller may get the raw bytes as well (Display).
//
// It does not know what a task's record is, where the store keeps things,
// or when a task settles: the tasks package hands it the file to write
// (File), tells it through callbacks what only the store knows (noting a
// loss on the record, the seed an adopt left, whether a process runs), and
// reaches tmux for it through the one-method Panes. tasks imports capture,
// never the other way round.
package capture

// Package record is a task's record: the Task (what `ls --json` and
// `status --json` print, a contract with scripts and agents), the Record
// that sits on disk (the task plus the bookkeeping the wrapper, the capture
// and readers share without a daemon), and their JSON, both ways, as
// encoding/json would write and read it but without its reflection; and
// the format of records.index, the one file holding a copy of every
// finished record beside its file's stamp, so that `ls` need not open a
// thousand files (index.go).
//
// It does not read or write files, lock, decide transitions or know where
// the state lives: package tasks does, and is its one importer besides
// tests. It is its own package so that the codec, fuzzed against
// encoding/json, can be read and tested without the store.
package record

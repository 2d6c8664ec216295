package tasks

import (
	"github.com/qtask/qtask/tasks/statefs"
)

// State files (records, specs, notifications) are read only when they are
// regular files the effective user owns, and written by replacing them
// atomically, never through a symlink: the primitives are statefs's, shared
// with the notification queue. tasks calls them by these short names.
var (
	effectiveUID    = statefs.EffectiveUID
	readOwnFile     = statefs.ReadOwn
	readOwnFileStat = statefs.ReadOwnStat
	readToEnd       = statefs.ReadToEnd
	openNoEINTR     = statefs.Open
	writeFileAtomic = statefs.WriteAtomic
	prepareWrite    = statefs.Prepare
	mkdirPrivate    = statefs.MkdirPrivate
)

// pendingWrite is a replacement whose temp file exists already.
type pendingWrite = statefs.PendingWrite

// maxStateFile bounds what a state file may hold.
const maxStateFile = statefs.MaxFile

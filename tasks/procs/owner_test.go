package procs_test

import (
	"errors"
	"os"
	"slices"
	"sort"
	"syscall"
	"testing"

	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/procs/procstest"
)

// proc is a live process of a fake table.
var proc = procstest.Running

// A task as the wrapper records it: wrapper 400 leads session 400, the
// command 500 leads group 500.
func ownedRecord() *procs.Task {
	return &procs.Task{ID: "t1", PGID: 500, WrapperPID: 400, WrapperStart: 8000, Session: 400, CommandStart: 9000}
}

var ownedProcs = procstest.Table{
	1:   *proc(1, 1, 1, ""),
	300: *proc(300, 300, 100, ""), // the procs.Caller
	400: *proc(400, 400, 8000, ""),
	500: *proc(500, 400, 9000, "t1"),
	501: *proc(500, 400, 9100, ""), // a child that scrubbed its environment
}

func TestProveGroup(t *testing.T) {
	me := procs.Caller{Pgrp: 300, Session: 300}
	noWrapper := ownedProcs.With(400, nil)
	cases := []struct {
		name  string
		procs procstest.Table
		me    procs.Caller
		rec   func(*procs.Task)
		pgid  int
		owned bool
	}{
		{name: "leader is still the command", procs: ownedProcs, pgid: 500, owned: true},
		{name: "leader matches though nothing else does",
			procs: ownedProcs.With(400, nil).With(501, nil).With(500, proc(500, 77, 9000, "")), pgid: 500, owned: true},
		{name: "pid 1, even when the record matches it", procs: ownedProcs,
			rec: func(r *procs.Task) { r.PGID, r.CommandStart, r.WrapperPID, r.WrapperStart, r.Session = 1, 1, 1, 1, 1 }, pgid: 1},
		{name: "group 0", procs: ownedProcs, rec: func(r *procs.Task) { r.PGID = 0 }, pgid: 0},
		{name: "negative group", procs: ownedProcs, rec: func(r *procs.Task) { r.PGID = -500 }, pgid: -500},
		{name: "the procs.Caller's own group", procs: ownedProcs, me: procs.Caller{Pgrp: 500, Session: 400}, pgid: 500},
		{name: "recycled pid leading an unrelated group",
			procs: noWrapper.With(501, nil).With(500, proc(500, 500, 9999, "")), pgid: 500},
		{name: "planted record naming an unrelated setsid group",
			procs: ownedProcs.With(700, proc(700, 700, 12000, "")),
			rec: func(r *procs.Task) {
				r.PGID, r.CommandStart, r.WrapperPID, r.WrapperStart, r.Session = 700, 0, 700, 12000, 0
			}, pgid: 700},
		{name: "planted record naming a live wrapper's session",
			procs: ownedProcs.With(700, proc(700, 700, 12000, "")),
			rec:   func(r *procs.Task) { r.PGID, r.CommandStart, r.Session = 700, 0, 700 }, pgid: 700},
		{name: "leader gone, a member carries the task's id",
			procs: ownedProcs.With(500, nil).With(501, proc(500, 9, 9100, "t1")), pgid: 500, owned: true},
		{name: "record without an id, members without one either",
			procs: noWrapper.With(500, nil), rec: func(r *procs.Task) { r.ID, r.CommandStart, r.Session = "", 0, 0 }, pgid: 500},
		{name: "leader gone, a member carries another task's id",
			procs: noWrapper.With(500, nil).With(501, proc(500, 9, 9100, "t2")), pgid: 500},
		{name: "leader gone, scrubbed member in the live wrapper's session",
			procs: ownedProcs.With(500, nil), pgid: 500, owned: true},
		{name: "another group in the live wrapper's session",
			procs: ownedProcs.With(600, proc(600, 400, 9500, "")), pgid: 600, owned: true},
		{name: "wrapper gone, scrubbed member of the command's group and session",
			procs: noWrapper.With(500, nil), pgid: 500, owned: true},
		{name: "wrapper gone, member older than the command",
			procs: noWrapper.With(500, nil).With(501, proc(500, 400, 10, "")), pgid: 500},
		{name: "wrapper gone, scrubbed job in another group of its session",
			procs: noWrapper.With(600, proc(600, 400, 9500, "")), pgid: 600},
		{name: "wrapper pid recycled into another session",
			procs: ownedProcs.With(500, nil).With(400, proc(400, 401, 8000, "")), pgid: 500,
			rec: func(r *procs.Task) { r.CommandStart = 0 }},
		{name: "wrapper pid recycled with another start time",
			procs: ownedProcs.With(500, nil).With(400, proc(400, 400, 8001, "")), pgid: 500,
			rec: func(r *procs.Task) { r.CommandStart = 0 }},
		{name: "record from before start times were kept, member carries the id",
			procs: ownedProcs, rec: func(r *procs.Task) { r.CommandStart, r.Session = 0, 0 }, pgid: 500, owned: true},
		{name: "record from before start times were kept, nothing carries the id",
			procs: ownedProcs.With(500, proc(500, 400, 9000, "")),
			rec:   func(r *procs.Task) { r.CommandStart, r.Session = 0, 0 }, pgid: 500},
	}
	for _, tc := range cases {
		r := ownedRecord()
		if tc.rec != nil {
			tc.rec(r)
		}
		if tc.me == (procs.Caller{}) {
			tc.me = me
		}
		err := procs.ProveGroup(tc.procs, tc.me, *r, tc.pgid)
		switch {
		case tc.owned && err != nil:
			t.Errorf("%s: ProveGroup(%d) = %v; the task's own processes would outlive a stop", tc.name, tc.pgid, err)
		case !tc.owned && err == nil:
			t.Errorf("%s: ProveGroup(%d) = nil; qtask would signal processes that are not the task's", tc.name, tc.pgid)
		}
	}
}

func TestProveGroupGone(t *testing.T) {
	table := ownedProcs.With(500, nil).With(501, nil)
	err := procs.ProveGroup(table, procs.Caller{Pgrp: 300}, *ownedRecord(), 500)
	var gone *procs.GroupGoneError
	if !errors.As(err, &gone) {
		t.Fatalf("ProveGroup of an empty group = %v, want a GroupGoneError: a stop racing the natural end would call the task lost", err)
	}
}

func TestLeftoverGroups(t *testing.T) {
	table := ownedProcs.With(400, nil).
		With(600, proc(600, 400, 9500, "t1")). // a job that kept its environment
		With(700, proc(700, 400, 9600, "")).   // a job that scrubbed it
		With(800, proc(800, 800, 9700, ""))    // unrelated
	r := ownedRecord()
	groups := procs.LeftoverGroups(table, *r)
	sort.Ints(groups)
	if want := []int{500, 600, 700}; !slices.Equal(groups, want) {
		t.Fatalf("leftoverGroups = %v, want %v (the command's group and the other groups of its session)", groups, want)
	}
	var owned []int
	for _, g := range groups {
		if procs.ProveGroup(table, procs.Caller{Pgrp: 300}, *r, g) == nil {
			owned = append(owned, g)
		}
	}
	if want := []int{500, 600}; !slices.Equal(owned, want) {
		t.Fatalf("groups a lost task's reconcile would kill = %v, want %v", owned, want)
	}
}

// strayTable is task t1 of ownedRecord with processes that left its
// group: wrapper 400 (group 400) runs the command 500 (group 500).
var strayTable = procstest.Table{
	1:   *proc(1, 1, 1, ""),
	300: *proc(300, 300, 100, "").Under(1),                                                   // the procs.Caller
	400: *proc(400, 400, 8000, "").Under(1),                                                  // the wrapper
	450: *proc(400, 400, 8500, "").Under(400),                                                // a tmux call of the wrapper's
	451: *proc(451, 451, 8600, "").Under(450),                                                // …and what that started
	500: *proc(500, 400, 9000, "t1").Under(400),                                              // the command
	501: *proc(500, 400, 9100, "").Under(500),                                                // in its group
	600: *proc(600, 600, 9200, "t1").Under(500),                                              // setsid
	601: *proc(601, 400, 9300, "").Under(600),                                                // its child, in a group of its own (set -m)
	700: *proc(700, 700, 9400, "").Under(400),                                                // an orphan, back to its subreaper, environment scrubbed
	701: {Stat: procs.Stat{State: 'Z', PPID: 400, Pgrp: 701, Session: 701, StartTime: 9500}}, // a dead orphan
	800: *proc(800, 800, 9600, "t1").Under(1),                                                // not under the wrapper (it carries the id)
}

func TestStrays(t *testing.T) {
	me := procs.Caller{PID: 300, Pgrp: 300, Session: 300}
	cases := []struct {
		name  string
		procs procstest.Table
		me    procs.Caller
		rec   func(*procs.Task)
		want  []int
	}{
		{name: "every descendant outside the command's group, but the wrapper's own calls and the dead",
			procs: strayTable, want: []int{600, 601, 700}},
		{name: "not the procs.Caller, nor its group", procs: strayTable, me: procs.Caller{PID: 601, Pgrp: 700}, want: []int{600}},
		{name: "wrapper gone", procs: strayTable.With(400, nil)},
		{name: "wrapper pid recycled", procs: strayTable.With(400, proc(400, 400, 8001, "").Under(1))},
		{name: "wrapper a zombie", procs: strayTable.With(400, &procstest.Process{Stat: procs.Stat{State: 'Z', PPID: 1, Pgrp: 400, Session: 400, StartTime: 8000}})},
		{name: "adopted: the pane's shell is no wrapper", procs: strayTable, rec: func(r *procs.Task) { r.Adopted = true }},
		{name: "record naming pid 1 as its wrapper", procs: strayTable, rec: func(r *procs.Task) { r.WrapperPID, r.WrapperStart = 1, 1 }},
	}
	for _, tc := range cases {
		r := ownedRecord()
		if tc.rec != nil {
			tc.rec(r)
		}
		if tc.me == (procs.Caller{}) {
			tc.me = me
		}
		var got []int
		for _, m := range procs.Strays(tc.procs, tc.me, *r, 500) {
			got = append(got, m.PID)
		}
		sort.Ints(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: strays = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCarriers(t *testing.T) {
	table := strayTable.With(400, nil).
		With(802, proc(802, 802, 8999, "t1")). // started before the command: an older task's
		With(803, &procstest.Process{Stat: procs.Stat{State: 'Z', Pgrp: 803, Session: 803, StartTime: 9700}, TaskID: "t1"})
	cases := []struct {
		name string
		me   procs.Caller
		rec  func(*procs.Task)
		want []int
	}{
		{name: "what carries the id and started since the command", me: procs.Caller{PID: 300, Pgrp: 300}, want: []int{500, 600, 800}},
		{name: "not the procs.Caller, nor its group", me: procs.Caller{PID: 800, Pgrp: 500}, want: []int{600}},
		{name: "no command start: since the wrapper's", me: procs.Caller{PID: 300, Pgrp: 300},
			rec: func(r *procs.Task) { r.CommandStart = 0 }, want: []int{500, 600, 800, 802}},
		{name: "no start time at all", me: procs.Caller{PID: 300, Pgrp: 300}, rec: func(r *procs.Task) { r.CommandStart, r.WrapperStart = 0, 0 }},
		{name: "no id", me: procs.Caller{PID: 300, Pgrp: 300}, rec: func(r *procs.Task) { r.ID = "" }},
	}
	for _, tc := range cases {
		r := ownedRecord()
		if tc.rec != nil {
			tc.rec(r)
		}
		var got []int
		for _, m := range procs.Carriers(table, tc.me, *r) {
			got = append(got, m.PID)
		}
		sort.Ints(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: carriers = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestProveGroupRealProcess proves a real child's group from /proc: by its
// start time, by its environment, and not at all with neither.
func TestProveGroupRealProcess(t *testing.T) {
	requireProcfs(t)
	pid, stop := startGroupLeader(t, []string{"QTASK_TASK_ID=child"})
	defer stop()
	start := procs.StartTime(pid)
	if start == 0 {
		t.Fatal("no start time for a live child")
	}
	cases := []struct {
		name  string
		rec   procs.Task
		owned bool
	}{
		{"pid and start time", procs.Task{ID: "other", PGID: pid, CommandStart: start}, true},
		{"environment", procs.Task{ID: "child", PGID: pid, CommandStart: start + 1}, true},
		{"neither", procs.Task{ID: "other", PGID: pid, CommandStart: start + 1}, false},
	}
	for _, tc := range cases {
		err := procs.ProveGroup(procs.OS{}, procs.Self(), tc.rec, pid)
		if tc.owned != (err == nil) {
			t.Errorf("%s: ProveGroup(real child) = %v, want owned %v", tc.name, err, tc.owned)
		}
	}
	if err := procs.ProveGroup(procs.OS{}, procs.Self(), procs.Task{ID: "x", PGID: os.Getpid(), CommandStart: procs.StartTime(os.Getpid())}, syscall.Getpgrp()); err == nil {
		t.Errorf("ProveGroup of the test's own group = nil: a stop could signal the process asking for it")
	}
}

func TestStopCallerInsideTask(t *testing.T) {
	r := ownedRecord()
	cases := []struct {
		name  string
		rec   func(*procs.Task)
		procs procstest.Table
		me    procs.Caller
		want  bool
	}{
		{name: "in the command's group", me: procs.Caller{Pgrp: 500, Session: 77}, want: true},
		{name: "in the task's session, another group", me: procs.Caller{Pgrp: 600, Session: 400}, want: true},
		{name: "outside", me: procs.Caller{Pgrp: 300, Session: 300}},
		{name: "group and session hidden by a pid namespace, no pid yet", rec: func(r *procs.Task) { r.PGID, r.Session = 0, 0 }, me: procs.Caller{}},
		{name: "in a session of its own under the wrapper", me: procs.Caller{PID: 601, Pgrp: 601, Session: 600}, want: true},
		{name: "an orphan come back to the wrapper", me: procs.Caller{PID: 700, Pgrp: 700, Session: 700}, want: true},
		{name: "carrying the task's id, but not under its wrapper", me: procs.Caller{PID: 800, Pgrp: 800, Session: 800}},
		{name: "under a wrapper whose pid was recycled", procs: strayTable.With(400, proc(400, 400, 8001, "").Under(1)),
			me: procs.Caller{PID: 700, Pgrp: 700, Session: 700}},
	}
	for _, tc := range cases {
		r := *r
		if tc.rec != nil {
			tc.rec(&r)
		}
		if tc.procs == nil {
			tc.procs = strayTable
		}
		if got := r.Contains(tc.procs, tc.me); got != tc.want {
			t.Errorf("%s: contains(%+v) = %v, want %v", tc.name, tc.me, got, tc.want)
		}
	}
}

package tasks

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"sort"
	"syscall"
	"testing"
)

// fakeProcs is a process table for proofs: pid → stat and QTASK_TASK_ID.
type fakeProcs map[int]fakeProc

type fakeProc struct {
	st     procStat
	taskID string
}

func (f fakeProcs) stat(pid int) (procStat, error) {
	p, ok := f[pid]
	if !ok {
		return procStat{}, fs.ErrNotExist
	}
	return p.st, nil
}

func (f fakeProcs) pids() ([]int, error) {
	var pids []int
	for pid := range f {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	return pids, nil
}

func (f fakeProcs) taskID(pid int) string { return f[pid].taskID }

// with returns a copy of f with pid replaced (p set) or removed (p nil).
func (f fakeProcs) with(pid int, p *fakeProc) fakeProcs {
	g := fakeProcs{}
	for k, v := range f {
		g[k] = v
	}
	if p == nil {
		delete(g, pid)
	} else {
		g[pid] = *p
	}
	return g
}

func proc(pgrp, session int, start uint64, taskID string) *fakeProc {
	return &fakeProc{st: procStat{state: 'S', pgrp: pgrp, session: session, startTime: start}, taskID: taskID}
}

// A task as the wrapper records it: wrapper 400 leads session 400, the
// command 500 leads group 500.
func ownedRecord() *record {
	return &record{Task: Task{ID: "t1", PID: 500}, WrapperPID: 400, WrapperStart: 8000, Session: 400, CommandStart: 9000}
}

var ownedProcs = fakeProcs{
	1:   *proc(1, 1, 1, ""),
	300: *proc(300, 300, 100, ""), // the caller
	400: *proc(400, 400, 8000, ""),
	500: *proc(500, 400, 9000, "t1"),
	501: *proc(500, 400, 9100, ""), // a child that scrubbed its environment
}

func TestProveGroup(t *testing.T) {
	me := caller{pgrp: 300, session: 300}
	noWrapper := ownedProcs.with(400, nil)
	cases := []struct {
		name  string
		procs fakeProcs
		me    caller
		rec   func(*record)
		pgid  int
		owned bool
	}{
		{name: "leader is still the command", procs: ownedProcs, pgid: 500, owned: true},
		{name: "leader matches though nothing else does",
			procs: ownedProcs.with(400, nil).with(501, nil).with(500, proc(500, 77, 9000, "")), pgid: 500, owned: true},
		{name: "pid 1, even when the record matches it", procs: ownedProcs,
			rec: func(r *record) { r.PID, r.CommandStart, r.WrapperPID, r.WrapperStart, r.Session = 1, 1, 1, 1, 1 }, pgid: 1},
		{name: "group 0", procs: ownedProcs, rec: func(r *record) { r.PID = 0 }, pgid: 0},
		{name: "negative group", procs: ownedProcs, rec: func(r *record) { r.PID = -500 }, pgid: -500},
		{name: "the caller's own group", procs: ownedProcs, me: caller{pgrp: 500, session: 400}, pgid: 500},
		{name: "recycled pid leading an unrelated group",
			procs: noWrapper.with(501, nil).with(500, proc(500, 500, 9999, "")), pgid: 500},
		{name: "planted record naming an unrelated setsid group",
			procs: ownedProcs.with(700, proc(700, 700, 12000, "")),
			rec: func(r *record) {
				r.PID, r.CommandStart, r.WrapperPID, r.WrapperStart, r.Session = 700, 0, 700, 12000, 0
			}, pgid: 700},
		{name: "planted record naming a live wrapper's session",
			procs: ownedProcs.with(700, proc(700, 700, 12000, "")),
			rec:   func(r *record) { r.PID, r.CommandStart, r.Session = 700, 0, 700 }, pgid: 700},
		{name: "leader gone, a member carries the task's id",
			procs: ownedProcs.with(500, nil).with(501, proc(500, 9, 9100, "t1")), pgid: 500, owned: true},
		{name: "record without an id, members without one either",
			procs: noWrapper.with(500, nil), rec: func(r *record) { r.ID, r.CommandStart, r.Session = "", 0, 0 }, pgid: 500},
		{name: "leader gone, a member carries another task's id",
			procs: noWrapper.with(500, nil).with(501, proc(500, 9, 9100, "t2")), pgid: 500},
		{name: "leader gone, scrubbed member in the live wrapper's session",
			procs: ownedProcs.with(500, nil), pgid: 500, owned: true},
		{name: "another group in the live wrapper's session",
			procs: ownedProcs.with(600, proc(600, 400, 9500, "")), pgid: 600, owned: true},
		{name: "wrapper gone, scrubbed member of the command's group and session",
			procs: noWrapper.with(500, nil), pgid: 500, owned: true},
		{name: "wrapper gone, member older than the command",
			procs: noWrapper.with(500, nil).with(501, proc(500, 400, 10, "")), pgid: 500},
		{name: "wrapper gone, scrubbed job in another group of its session",
			procs: noWrapper.with(600, proc(600, 400, 9500, "")), pgid: 600},
		{name: "wrapper pid recycled into another session",
			procs: ownedProcs.with(500, nil).with(400, proc(400, 401, 8000, "")), pgid: 500,
			rec: func(r *record) { r.CommandStart = 0 }},
		{name: "wrapper pid recycled with another start time",
			procs: ownedProcs.with(500, nil).with(400, proc(400, 400, 8001, "")), pgid: 500,
			rec: func(r *record) { r.CommandStart = 0 }},
		{name: "record from before start times were kept, member carries the id",
			procs: ownedProcs, rec: func(r *record) { r.CommandStart, r.Session = 0, 0 }, pgid: 500, owned: true},
		{name: "record from before start times were kept, nothing carries the id",
			procs: ownedProcs.with(500, proc(500, 400, 9000, "")),
			rec:   func(r *record) { r.CommandStart, r.Session = 0, 0 }, pgid: 500},
	}
	for _, tc := range cases {
		r := ownedRecord()
		if tc.rec != nil {
			tc.rec(r)
		}
		if tc.me == (caller{}) {
			tc.me = me
		}
		err := proveGroup(tc.procs, tc.me, r, tc.pgid)
		switch {
		case tc.owned && err != nil:
			t.Errorf("%s: proveGroup(%d) = %v; the task's own processes would outlive a stop", tc.name, tc.pgid, err)
		case !tc.owned && err == nil:
			t.Errorf("%s: proveGroup(%d) = nil; qtask would signal processes that are not the task's", tc.name, tc.pgid)
		}
	}
}

func TestProveGroupGone(t *testing.T) {
	procs := ownedProcs.with(500, nil).with(501, nil)
	err := proveGroup(procs, caller{pgrp: 300}, ownedRecord(), 500)
	var gone *groupGoneError
	if !errors.As(err, &gone) {
		t.Fatalf("proveGroup of an empty group = %v, want a groupGoneError: a stop racing the natural end would call the task lost", err)
	}
}

func TestLeftoverGroups(t *testing.T) {
	procs := ownedProcs.with(400, nil).
		with(600, proc(600, 400, 9500, "t1")). // a job that kept its environment
		with(700, proc(700, 400, 9600, "")).   // a job that scrubbed it
		with(800, proc(800, 800, 9700, ""))    // unrelated
	r := ownedRecord()
	groups := leftoverGroups(procs, r)
	sort.Ints(groups)
	if want := []int{500, 600, 700}; !slices.Equal(groups, want) {
		t.Fatalf("leftoverGroups = %v, want %v (the command's group and the other groups of its session)", groups, want)
	}
	var owned []int
	for _, g := range groups {
		if proveGroup(procs, caller{pgrp: 300}, r, g) == nil {
			owned = append(owned, g)
		}
	}
	if want := []int{500, 600}; !slices.Equal(owned, want) {
		t.Fatalf("groups a lost task's reconcile would kill = %v, want %v", owned, want)
	}
}

// strayTable is task t1 of ownedRecord with processes that left its
// group: wrapper 400 (group 400) runs the command 500 (group 500).
var strayTable = fakeProcs{
	1:   *proc(1, 1, 1, ""),
	300: *child(proc(300, 300, 100, ""), 1),                                              // the caller
	400: *child(proc(400, 400, 8000, ""), 1),                                             // the wrapper
	450: *child(proc(400, 400, 8500, ""), 400),                                           // a tmux call of the wrapper's
	451: *child(proc(451, 451, 8600, ""), 450),                                           // …and what that started
	500: *child(proc(500, 400, 9000, "t1"), 400),                                         // the command
	501: *child(proc(500, 400, 9100, ""), 500),                                           // in its group
	600: *child(proc(600, 600, 9200, "t1"), 500),                                         // setsid
	601: *child(proc(601, 400, 9300, ""), 600),                                           // its child, in a group of its own (set -m)
	700: *child(proc(700, 700, 9400, ""), 400),                                           // an orphan, back to its subreaper, environment scrubbed
	701: {st: procStat{state: 'Z', ppid: 400, pgrp: 701, session: 701, startTime: 9500}}, // a dead orphan
	800: *child(proc(800, 800, 9600, "t1"), 1),                                           // not under the wrapper (it carries the id)
}

func child(p *fakeProc, ppid int) *fakeProc {
	p.st.ppid = ppid
	return p
}

func TestStrays(t *testing.T) {
	me := caller{pid: 300, pgrp: 300, session: 300}
	cases := []struct {
		name  string
		procs fakeProcs
		me    caller
		rec   func(*record)
		want  []int
	}{
		{name: "every descendant outside the command's group, but the wrapper's own calls and the dead",
			procs: strayTable, want: []int{600, 601, 700}},
		{name: "not the caller, nor its group", procs: strayTable, me: caller{pid: 601, pgrp: 700}, want: []int{600}},
		{name: "wrapper gone", procs: strayTable.with(400, nil)},
		{name: "wrapper pid recycled", procs: strayTable.with(400, child(proc(400, 400, 8001, ""), 1))},
		{name: "wrapper a zombie", procs: strayTable.with(400, &fakeProc{st: procStat{state: 'Z', ppid: 1, pgrp: 400, session: 400, startTime: 8000}})},
		{name: "adopted: the pane's shell is no wrapper", procs: strayTable, rec: func(r *record) { r.Adopted = true }},
		{name: "record naming pid 1 as its wrapper", procs: strayTable, rec: func(r *record) { r.WrapperPID, r.WrapperStart = 1, 1 }},
	}
	for _, tc := range cases {
		r := ownedRecord()
		if tc.rec != nil {
			tc.rec(r)
		}
		if tc.me == (caller{}) {
			tc.me = me
		}
		var got []int
		for _, m := range strays(tc.procs, tc.me, r, 500) {
			got = append(got, m.pid)
		}
		sort.Ints(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: strays = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCarriers(t *testing.T) {
	procs := strayTable.with(400, nil).
		with(802, proc(802, 802, 8999, "t1")). // started before the command: an older task's
		with(803, &fakeProc{st: procStat{state: 'Z', pgrp: 803, session: 803, startTime: 9700}, taskID: "t1"})
	cases := []struct {
		name string
		me   caller
		rec  func(*record)
		want []int
	}{
		{name: "what carries the id and started since the command", me: caller{pid: 300, pgrp: 300}, want: []int{500, 600, 800}},
		{name: "not the caller, nor its group", me: caller{pid: 800, pgrp: 500}, want: []int{600}},
		{name: "no command start: since the wrapper's", me: caller{pid: 300, pgrp: 300},
			rec: func(r *record) { r.CommandStart = 0 }, want: []int{500, 600, 800, 802}},
		{name: "no start time at all", me: caller{pid: 300, pgrp: 300}, rec: func(r *record) { r.CommandStart, r.WrapperStart = 0, 0 }},
		{name: "no id", me: caller{pid: 300, pgrp: 300}, rec: func(r *record) { r.ID = "" }},
	}
	for _, tc := range cases {
		r := ownedRecord()
		if tc.rec != nil {
			tc.rec(r)
		}
		var got []int
		for _, m := range carriers(procs, tc.me, r) {
			got = append(got, m.pid)
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
	start := processStart(pid)
	if start == 0 {
		t.Fatal("no start time for a live child")
	}
	cases := []struct {
		name  string
		rec   record
		owned bool
	}{
		{"pid and start time", record{Task: Task{ID: "other", PID: pid}, CommandStart: start}, true},
		{"environment", record{Task: Task{ID: "child", PID: pid}, CommandStart: start + 1}, true},
		{"neither", record{Task: Task{ID: "other", PID: pid}, CommandStart: start + 1}, false},
	}
	for _, tc := range cases {
		err := proveGroup(procfs{}, self(), &tc.rec, pid)
		if tc.owned != (err == nil) {
			t.Errorf("%s: proveGroup(real child) = %v, want owned %v", tc.name, err, tc.owned)
		}
	}
	if err := proveGroup(procfs{}, self(), &record{Task: Task{ID: "x", PID: os.Getpid()}, CommandStart: processStart(os.Getpid())}, syscall.Getpgrp()); err == nil {
		t.Errorf("proveGroup of the test's own group = nil: a stop could signal the process asking for it")
	}
}

func TestStopCallerInsideTask(t *testing.T) {
	r := ownedRecord()
	cases := []struct {
		name  string
		rec   func(*record)
		procs fakeProcs
		me    caller
		want  bool
	}{
		{name: "in the command's group", me: caller{pgrp: 500, session: 77}, want: true},
		{name: "in the task's session, another group", me: caller{pgrp: 600, session: 400}, want: true},
		{name: "outside", me: caller{pgrp: 300, session: 300}},
		{name: "group and session hidden by a pid namespace, no pid yet", rec: func(r *record) { r.PID, r.Session = 0, 0 }, me: caller{}},
		{name: "in a session of its own under the wrapper", me: caller{pid: 601, pgrp: 601, session: 600}, want: true},
		{name: "an orphan come back to the wrapper", me: caller{pid: 700, pgrp: 700, session: 700}, want: true},
		{name: "carrying the task's id, but not under its wrapper", me: caller{pid: 800, pgrp: 800, session: 800}},
		{name: "under a wrapper whose pid was recycled", procs: strayTable.with(400, child(proc(400, 400, 8001, ""), 1)),
			me: caller{pid: 700, pgrp: 700, session: 700}},
	}
	for _, tc := range cases {
		r := *r
		if tc.rec != nil {
			tc.rec(&r)
		}
		if tc.procs == nil {
			tc.procs = strayTable
		}
		if got := r.contains(tc.procs, tc.me); got != tc.want {
			t.Errorf("%s: contains(%+v) = %v, want %v", tc.name, tc.me, got, tc.want)
		}
	}
}

package procs

// The unexported steps of the proof, for the tests of package procs_test
// (which share procstest's fake table with the tests of package tasks).
var (
	ParseStat      = parseStat
	LeftoverGroups = leftoverGroups
	Strays         = strays
	Carriers       = carriers
)

// OwnChildren is the wrapper's short process table (its own children).
type OwnChildren = ownChildren

var (
	GroupMembers = groupMembers
	ChildrenOf   = childrenOf
)

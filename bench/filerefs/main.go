// Command filerefs measures how tangled one Go package is inside: which
// of its files refer to which (a file using a package-level name, method
// or field declared in another), how many of those references sit inside
// cycles of files, and how many point back up against the best order of
// the files it can find. A package whose files form layers has few of
// either; one where everything reaches everything has many. It was
// written to measure the split of `tasks` (docs/ARCHITECTURE.md):
//
//	go run ./bench/filerefs ./tasks
//
// Test files are left out: only what the package ships counts.
package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: filerefs PACKAGE_DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	g, err := load(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "filerefs:", err)
		os.Exit(1)
	}
	inCycles, largest := g.cycles()
	fmt.Printf("%s: %d files, %d file->file references, %d inside cycles, largest cycle %d files, %d pointing back up\n",
		dir, len(g.files), len(g.edges), inCycles, largest, g.backEdges())
}

// graph is the package's files and the references between them: an edge
// {a, b} means a uses something declared in b.
type graph struct {
	files []string
	edges map[[2]string]bool
}

// load type-checks the package's non-test files from source and collects
// the references between them.
func load(dir string) (*graph, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	g := &graph{edges: map[[2]string]bool{}}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		g.files = append(g.files, filepath.Base(name))
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check(dir, fset, files, info)
	if err != nil {
		return nil, err
	}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		if obj.Parent() != pkg.Scope() && !isMember(obj) {
			continue // a local name
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to {
			g.edges[[2]string{from, to}] = true
		}
	}
	return g, nil
}

// isMember reports whether obj is a method or a struct field.
func isMember(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Type().(*types.Signature).Recv() != nil
	case *types.Var:
		return o.IsField()
	}
	return false
}

// cycles counts the references inside a strongly connected set of more
// than one file (Tarjan's algorithm), and the size of the largest set.
func (g *graph) cycles() (inCycles, largest int) {
	adj := map[string][]string{}
	for e := range g.edges {
		adj[e[0]] = append(adj[e[0]], e[1])
	}
	index, low := map[string]int{}, map[string]int{}
	onStack, comp := map[string]bool{}, map[string]int{}
	var stack []string
	next, comps := 0, 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range adj[v] {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp[w] = comps
			if w == v {
				break
			}
		}
		comps++
	}
	for _, f := range g.files {
		if _, seen := index[f]; !seen {
			strong(f)
		}
	}
	size := map[int]int{}
	for _, f := range g.files {
		size[comp[f]]++
		largest = max(largest, size[comp[f]])
	}
	for e := range g.edges {
		if c := comp[e[0]]; c == comp[e[1]] && size[c] > 1 {
			inCycles++
		}
	}
	if largest == 1 {
		largest = 0
	}
	return inCycles, largest
}

// backEdges orders the files users first, as the greedy heuristic of
// Eades, Lin and Smyth does (files nothing uses go first, files that use
// nothing last, else the file using the most more than it is used), and
// counts the references pointing against that order: those that run back
// up. It is an upper bound on the fewest references whose removal would
// leave the files in layers.
func (g *graph) backEdges() int {
	left := slices.Clone(g.files)
	slices.Sort(left)
	degree := func(f string) (in, out int) {
		for e := range g.edges {
			if !slices.Contains(left, e[0]) || !slices.Contains(left, e[1]) {
				continue
			}
			if e[0] == f {
				out++
			}
			if e[1] == f {
				in++
			}
		}
		return in, out
	}
	var first, last []string
	take := func(f string) { left = slices.DeleteFunc(left, func(x string) bool { return x == f }) }
	for len(left) > 0 {
		for moved := true; moved; {
			moved = false
			for _, f := range slices.Clone(left) {
				switch in, out := degree(f); {
				case out == 0:
					last = append([]string{f}, last...)
				case in == 0:
					first = append(first, f)
				default:
					continue
				}
				take(f)
				moved = true
			}
		}
		best, bestDelta := "", 0
		for _, f := range left {
			in, out := degree(f)
			if best == "" || out-in > bestDelta {
				best, bestDelta = f, out-in
			}
		}
		if best != "" {
			first = append(first, best)
			take(best)
		}
	}
	pos := map[string]int{}
	for i, f := range append(first, last...) {
		pos[f] = i
	}
	back := 0
	for e := range g.edges {
		if pos[e[0]] > pos[e[1]] {
			back++
		}
	}
	return back
}

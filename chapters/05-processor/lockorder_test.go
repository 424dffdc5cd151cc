package processor

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockRank is doc.go's lock order: a lock may be taken while holding only
// locks of a lower rank.
var lockRank = map[string]int{"startedLock": 1, "blockDeltas": 2, "listenersLock": 3, "resyncLock": 4}

// lockOrderViolations reads Go sources and reports every place where a
// ranked lock is taken while one of the same or a higher rank is held: in
// the same function (in source order: a Lock is held until its Unlock, a
// deferred Unlock until the function returns), or in a function of the
// sources called while holding it (one level deep). A call is resolved
// when it names a package function, a method on the function's own
// receiver, or a method on a field of it whose type the sources declare;
// other calls (on a loop variable, say) are not followed. It is a static
// check, so it sees every path, run or not; it does not follow branches,
// so a lock taken and released in two branches counts as held from the
// Lock to the next Unlock.
func lockOrderViolations(t *testing.T, srcs map[string]string) []string {
	t.Helper()
	fset := token.NewFileSet()
	type event struct {
		lock, unlock string // Lock/RLock, Unlock/RUnlock of a ranked lock
		call         string // a resolved call: "Type.Method" or "func"
		pos          token.Pos
	}
	var decls []*ast.FuncDecl
	fields := map[string]map[string]string{} // type → field → the field's type
	typeName := func(e ast.Expr) string {
		if st, ok := e.(*ast.StarExpr); ok {
			e = st.X
		}
		if ix, ok := e.(*ast.IndexExpr); ok {
			e = ix.X
		}
		if id, ok := e.(*ast.Ident); ok {
			return id.Name
		}
		return ""
	}
	for name, src := range srcs {
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body != nil {
					decls = append(decls, d)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					ts, ok := sp.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					fields[ts.Name.Name] = map[string]string{}
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							fields[ts.Name.Name][n.Name] = typeName(fl.Type)
						}
					}
				}
			}
		}
	}
	keyOf := func(fd *ast.FuncDecl) (key, recv, recvType string) {
		if fd.Recv == nil {
			return fd.Name.Name, "", ""
		}
		r := fd.Recv.List[0]
		recvType = typeName(r.Type)
		if len(r.Names) > 0 {
			recv = r.Names[0].Name
		}
		return recvType + "." + fd.Name.Name, recv, recvType
	}
	events := map[string][]event{}
	var order []string
	for _, fd := range decls {
		key, recv, recvType := keyOf(fd)
		resolve := func(fun ast.Expr) string {
			switch fun := fun.(type) {
			case *ast.Ident:
				return fun.Name
			case *ast.SelectorExpr:
				switch x := fun.X.(type) {
				case *ast.Ident:
					if recv != "" && x.Name == recv {
						return recvType + "." + fun.Sel.Name
					}
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && recv != "" && id.Name == recv {
						if ft := fields[recvType][x.Sel.Name]; ft != "" {
							return ft + "." + fun.Sel.Name
						}
					}
				}
			}
			return ""
		}
		var evs []event
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if _, ok := n.(*ast.FuncLit); ok {
				return false // runs elsewhere (a goroutine, a callback)
			}
			if ds, ok := n.(*ast.DeferStmt); ok {
				// A deferred Unlock holds the lock to the end: skip it.
				if sel, ok := ds.Call.Fun.(*ast.SelectorExpr); ok && strings.HasSuffix(sel.Sel.Name, "Unlock") {
					return false
				}
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.SelectorExpr); ok && lockRank[x.Sel.Name] > 0 {
					switch sel.Sel.Name {
					case "Lock", "RLock":
						evs = append(evs, event{lock: x.Sel.Name, pos: call.Pos()})
					case "Unlock", "RUnlock":
						evs = append(evs, event{unlock: x.Sel.Name, pos: call.Pos()})
					}
					return true
				}
			}
			if c := resolve(call.Fun); c != "" {
				evs = append(evs, event{call: c, pos: call.Pos()})
			}
			return true
		})
		order = append(order, key)
		events[key] = evs
	}
	takes := map[string][]string{} // the ranked locks a function takes itself
	for key, evs := range events {
		for _, e := range evs {
			if e.lock != "" && !slices.Contains(takes[key], e.lock) {
				takes[key] = append(takes[key], e.lock)
			}
		}
	}
	var out []string
	check := func(held []string, lock string, pos token.Pos, via string) {
		for _, h := range held {
			if lockRank[lock] <= lockRank[h] {
				out = append(out, fmt.Sprintf("%s: %s taken%s while %s is held", fset.Position(pos), lock, via, h))
			}
		}
	}
	for _, key := range order {
		var held []string
		for _, e := range events[key] {
			switch {
			case e.lock != "":
				check(held, e.lock, e.pos, "")
				held = append(held, e.lock)
			case e.unlock != "":
				if i := slices.Index(held, e.unlock); i >= 0 {
					held = slices.Delete(held, i, i+1)
				}
			case e.call != "" && len(held) > 0:
				for _, l := range takes[e.call] {
					check(held, l, e.pos, " by "+e.call+"()")
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Chapter 5's code takes its locks in doc.go's order, everywhere.
func TestLocksAreTakenInTheDocumentedOrder(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	srcs := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		srcs[f] = string(b)
	}
	assert.Empty(t, lockOrderViolations(t, srcs))
}

// The check finds the two ways to break the order: directly, and through
// a function that takes a lock of its own.
func TestLockOrderCheckFindsAnInversion(t *testing.T) {
	src := `package x
func (s *s) bad() {
	s.blockDeltas.Lock()
	s.startedLock.Lock()
	s.startedLock.Unlock()
	s.blockDeltas.Unlock()
}
func (s *s) fine() {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	s.blockDeltas.Lock()
	s.blockDeltas.Unlock()
}
type l struct{ p *p }
func (p *p) takesListeners() {
	p.listenersLock.RLock()
	p.listenersLock.RUnlock()
}
func (l *l) badCall() {
	l.resyncLock.Lock()
	defer l.resyncLock.Unlock()
	l.p.takesListeners()
}
`
	assert.Equal(t, []string{
		"x.go:22:2: listenersLock taken by p.takesListeners() while resyncLock is held",
		"x.go:4:2: startedLock taken while blockDeltas is held",
	}, lockOrderViolations(t, map[string]string{"x.go": src}))
}

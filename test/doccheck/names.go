package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// The second check: a doc's backticked Go names and repository paths must
// exist. A sentence naming a function that was renamed, or a file that
// moved, is wrong however well it reads; this finds such sentences when the
// code changes, not when a reader trips on them.

// Span is one piece of a doc a check looks at: the text of an inline code
// span (`...`), a line of a fenced block that is not Go or mermaid, or a
// link's target.
type Span struct {
	Doc  string
	Line int // 1-based
	Text string
	Kind SpanKind
}

// SpanKind says where a Span came from.
type SpanKind int

// The kinds of Span.
const (
	InlineCode SpanKind = iota // `...` in prose: checked for names and paths
	FencedLine                 // a line of a shell or text block: paths only
	LinkTarget                 // a relative link's target: a path from the doc's folder
)

var (
	inlineRE = regexp.MustCompile("`([^`]+)`")
	linkRE   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// Spans returns the spans of one markdown file under root.
func Spans(root, doc string) ([]Span, error) {
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		return nil, err
	}
	var out []Span
	fence := "" // the open fence's info string; "" outside a block
	inFence := false
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if inFence {
				inFence = false
			} else {
				inFence, fence = true, strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			}
			continue
		}
		if inFence {
			if fence != "go" && fence != "mermaid" {
				out = append(out, Span{Doc: doc, Line: i + 1, Text: line, Kind: FencedLine})
			}
			continue
		}
		for _, m := range inlineRE.FindAllStringSubmatch(line, -1) {
			out = append(out, Span{Doc: doc, Line: i + 1, Text: m[1], Kind: InlineCode})
		}
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			out = append(out, Span{Doc: doc, Line: i + 1, Text: m[1], Kind: LinkTarget})
		}
	}
	return out, nil
}

var (
	identRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	fileNameRE = regexp.MustCompile(`\.(go|md|mod|sum|sh|json|js|html|css|yaml|yml|txt|png)$`)
)

// GoName returns the Go name an inline code span names, if it reads as one:
// `Foo`, `pkg.Foo`, `Type.Method`, with a leading * or &, a call's
// parentheses (and arguments) or type arguments stripped. A single word
// counts only if it is written as Go writes names and prose does not
// (an upper-case letter or an underscore: `Pop`, `handleDelta`,
// `whileProcessing_locked`); a dotted one only if some part is (so
// `informer.name` and `r.list` are not names). Words with no lower-case
// letter (`LIST`, `ADDED`, `OTEL_…`) are the API's or the shell's, not Go's.
func GoName(span string) (string, bool) {
	s := strings.TrimLeft(strings.TrimSpace(span), "*&")
	if i := strings.IndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	if !identRE.MatchString(s) || fileNameRE.MatchString(s) {
		return "", false
	}
	if strings.IndexFunc(s, unicode.IsLower) < 0 {
		return "", false
	}
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsUpper(r) || r == '_' }) {
		return "", false
	}
	return s, true
}

// Universe is what the docs' names are checked against: the Go code of
// this repository, client-go v0.37.2's tools/cache (tests too), workqueue,
// features and informers, and, when a doc qualifies a name by a package
// (`trace.WithTimestamp`, `priorityqueue.Opts`), the packages of that name
// or import alias among the modules' dependencies.
type Universe struct {
	idents    map[string]bool            // every identifier in the code
	selectors map[string]bool            // "X.Y" as written in the code
	members   map[string]map[string]bool // type → its methods, fields, interface methods
	embeds    map[string][]string        // type → the types it embeds
	dirDecls  map[string]map[string]bool // package folder → its top-level names (folders parsed)
	members2  map[string]bool            // every method or field name of any type
	literals  map[string]bool            // the string literals of the repository's non-test code (span names, attribute keys)
	qualDirs  map[string][]string        // package name or import alias → package folders, loaded on demand
	loaded    map[string]bool            // folders parsed
	fset      *token.FileSet
}

// clientGoDirs are parsed whether or not a doc names their package: the
// docs name their identifiers unqualified ("upstream's processDeltas").
var clientGoDirs = []string{"tools/cache", "tools/cache/synctrack", "util/workqueue", "features", "informers",
	"informers/core/v1", "dynamic/dynamicinformer", "metadata/metadatainformer"}

// preloaded are packages whose types the docs name by their type alone
// (`Tracer.Start`, `ProxyWatcher`, `lockedAddWithOpts`), so that a type's
// members are known before any doc qualifies them by package. They are
// parsed when a module depends on them.
var preloaded = []string{
	"go.opentelemetry.io/otel/trace", "go.opentelemetry.io/otel/sdk/trace",
	"k8s.io/apimachinery/pkg/watch", "k8s.io/apimachinery/pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/util/runtime",
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue",
}

// ClientGoVersion is the client-go whose names the docs may use.
const ClientGoVersion = "v0.37.2"

// modules are the repository's Go modules whose dependencies a qualified
// name may come from.
var modules = []string{".", "dropin/crqueue", "examples/controller-runtime"}

// LoadUniverse parses the repository under root and client-go, and lists
// (with go list) the packages a qualified name may be looked up in.
func LoadUniverse(root string) (*Universe, error) {
	u := &Universe{
		idents: map[string]bool{}, selectors: map[string]bool{}, members: map[string]map[string]bool{},
		embeds: map[string][]string{}, dirDecls: map[string]map[string]bool{}, members2: map[string]bool{}, literals: map[string]bool{},
		qualDirs: map[string][]string{}, loaded: map[string]bool{}, fset: token.NewFileSet(),
	}
	importDirs := map[string]string{}
	for _, m := range modules {
		dir := filepath.Join(root, m)
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
			continue
		}
		cmd := exec.Command("go", "list", "-e", "-deps", "-test", "-f", "{{.ImportPath}}\t{{.Name}}\t{{.Dir}}", "./...")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list in %s: %w", m, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Split(sc.Text(), "\t")
			if len(f) != 3 || f[2] == "" || strings.HasSuffix(f[0], ".test") {
				continue
			}
			importDirs[f[0]] = f[2]
			u.addQualDir(f[1], f[2])
		}
	}
	repoImports := map[string]string{} // alias → import path, from the repository's files
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(u.fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil // a deliberately broken file (a workshop stub) names nothing
		}
		u.addFile(f, filepath.Dir(path), true)
		u.addQualDir(f.Name.Name, filepath.Dir(path))
		for _, im := range f.Imports {
			if im.Name != nil && im.Name.Name != "_" && im.Name.Name != "." {
				p, _ := strconv.Unquote(im.Path.Value)
				repoImports[im.Name.Name] = p
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for alias, p := range repoImports {
		if dir, ok := importDirs[p]; ok {
			u.addQualDir(alias, dir)
		}
	}
	cg, err := clientGoDir()
	if err != nil {
		return nil, err
	}
	for _, p := range preloaded {
		if dir, ok := importDirs[p]; ok {
			if err := u.loadDir(dir, false); err != nil {
				return nil, err
			}
		}
	}
	for _, d := range clientGoDirs {
		if err := u.loadDir(filepath.Join(cg, d), true); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// clientGoDir is client-go v0.37.2's folder in the module cache.
func clientGoDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "client-go@"+ClientGoVersion)
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("client-go %s is not in the module cache (go mod download k8s.io/client-go@%s): %w", ClientGoVersion, ClientGoVersion, err)
	}
	return dir, nil
}

func (u *Universe) addQualDir(name, dir string) {
	for _, d := range u.qualDirs[name] {
		if d == dir {
			return
		}
	}
	u.qualDirs[name] = append(u.qualDirs[name], dir)
}

// loadDir parses one package folder's files once (tests only if withTests).
func (u *Universe) loadDir(dir string, withTests bool) error {
	if u.loaded[dir] {
		return nil
	}
	u.loaded[dir] = true
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || (!withTests && strings.HasSuffix(n, "_test.go")) {
			continue
		}
		f, err := parser.ParseFile(u.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		u.addFile(f, dir, false)
	}
	return nil
}

func (u *Universe) addFile(f *ast.File, dir string, repo bool) {
	u.loaded[dir] = true
	pkg := u.dirDecls[dir]
	if pkg == nil {
		pkg = map[string]bool{}
		u.dirDecls[dir] = pkg
	}
	member := func(typ, name string) {
		u.members2[name] = true
		if u.members[typ] == nil {
			u.members[typ] = map[string]bool{}
		}
		u.members[typ][name] = true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				pkg[d.Name.Name] = true
			} else if r := receiverName(d.Recv); r != "" {
				member(r, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					pkg[s.Name.Name] = true
					u.addTypeMembers(s.Name.Name, s.Type, member)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						pkg[n.Name] = true
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			u.idents[n.Name] = true
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				u.selectors[x.Name+"."+n.Sel.Name] = true
			}
		case *ast.BasicLit:
			if repo && n.Kind == token.STRING && !strings.HasSuffix(u.fset.File(n.Pos()).Name(), "_test.go") {
				if s, err := strconv.Unquote(n.Value); err == nil {
					u.literals[s] = true
				}
			}
		}
		return true
	})
}

func (u *Universe) addTypeMembers(typ string, t ast.Expr, member func(typ, name string)) {
	var fields *ast.FieldList
	switch t := t.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			if e := typeName(f.Type); e != "" {
				u.embeds[typ] = append(u.embeds[typ], e)
			}
			continue
		}
		for _, n := range f.Names {
			member(typ, n.Name)
		}
	}
}

// typeName is the bare name of an embedded type: T, *T, pkg.T, T[X].
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	}
	return ""
}

// hasMember reports whether a type named typ (any package's) has name as a
// method, field or interface method, its own or promoted from what it
// embeds.
func (u *Universe) hasMember(typ, name string) bool {
	seen := map[string]bool{}
	queue := []string{typ}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		if seen[t] {
			continue
		}
		seen[t] = true
		if u.members[t][name] || t == name { // an embedded type is a field named after it
			return true
		}
		queue = append(queue, u.embeds[t]...)
	}
	return false
}

func (u *Universe) isType(name string) bool {
	return u.members[name] != nil || u.embeds[name] != nil
}

// IsLiteral reports whether span is one of the repository's string
// literals, or a literal prefix ending in "." plus a name (a span name
// such as "Indexer.Add", built from "Indexer." and the operation).
func (u *Universe) IsLiteral(span string) bool {
	if u.literals[span] {
		return true
	}
	if i := strings.IndexByte(span, '.'); i > 0 {
		return u.literals[span[:i+1]]
	}
	return false
}

// Resolve says whether name (a GoName) exists, and if not, why.
//
// A single name must be an identifier somewhere in the code. For X.Y…:
// if X is a type, Y must be its member (and so on down the chain); if X is
// a package name or import alias, that package must declare Y; otherwise
// (X a variable, as in `informer.HasSynced`) Y must be an identifier
// somewhere. A selector written so in the code always resolves.
func (u *Universe) Resolve(name string) error {
	parts := strings.Split(name, ".")
	if len(parts) == 1 {
		if u.idents[name] {
			return nil
		}
		return fmt.Errorf("no identifier %s in the repository or client-go %s", name, ClientGoVersion)
	}
	if len(parts) == 2 && u.selectors[name] {
		return nil
	}
	q, rest := parts[0], parts[1:]
	var errs []string
	if u.isType(q) {
		if err := u.memberChain(q, rest); err == nil {
			return nil
		} else {
			errs = append(errs, err.Error())
		}
	}
	if dirs := u.qualDirs[q]; len(dirs) > 0 {
		declared := false
		for _, d := range dirs {
			if err := u.loadDir(d, false); err != nil {
				return err
			}
			declared = declared || u.dirDecls[d][rest[0]]
		}
		switch {
		case !declared && u.members2[rest[0]]:
			// `store.Resync()`: a variable that shares a package's name,
			// and a method some type has.
			return nil
		case !declared:
			errs = append(errs, fmt.Sprintf("no package named %s declares %s", q, rest[0]))
		case len(rest) == 1:
			return nil
		default:
			if err := u.memberChain(rest[0], rest[1:]); err == nil {
				return nil
			} else {
				errs = append(errs, err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	for _, p := range rest {
		if !u.idents[p] {
			return fmt.Errorf("no identifier %s in the repository or client-go %s", p, ClientGoVersion)
		}
	}
	return nil
}

func (u *Universe) memberChain(typ string, rest []string) error {
	for _, m := range rest {
		if !u.hasMember(typ, m) {
			return fmt.Errorf("no type %s with a method or field %s", typ, m)
		}
		typ = m
	}
	return nil
}

// pathTokenRE finds what may be a repository path inside a span: a run of
// path characters with a slash, or a top-level file.
var pathTokenRE = regexp.MustCompile(`(?:\./)?[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]*)+|\b[A-Za-z0-9_\-]+\.(?:md|go|mod|sh)\b`)

// RepoPaths returns the repository paths a span names, as paths from root:
// tokens whose first segment is a top-level entry of the repository
// (`chapters/04-deltafifo/consumer.go`, `./cmd/trace-demo`, `go.mod`), or,
// for a link, its target taken from the doc's folder. A token with a
// placeholder (<…>, *, {…}, …) or a "..." package pattern names no one path
// and is left out; a go.mod's "@version" and a ":line" are cut off.
func RepoPaths(root string, s Span, top map[string]bool) []string {
	if s.Kind == LinkTarget {
		t := s.Text
		if strings.Contains(t, "://") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "mailto:") {
			return nil
		}
		t, _, _ = strings.Cut(t, "#")
		if t == "" {
			return nil
		}
		return []string{filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(s.Doc), t)))}
	}
	var out []string
	for _, loc := range pathTokenRE.FindAllStringIndex(s.Text, -1) {
		tok := s.Text[loc[0]:loc[1]]
		if strings.ContainsAny(tok, "<>*{}$…") || strings.Contains(tok, "...") ||
			(loc[1] < len(s.Text) && strings.ContainsAny(s.Text[loc[1]:loc[1]+1], "<*{$")) {
			continue // a pattern, not a path: chapters/0N-*/
		}
		tok = strings.TrimPrefix(tok, "./")
		tok = strings.TrimRight(tok, ".,;:")
		first, second, _ := strings.Cut(tok, "/")
		if !top[first] {
			continue
		}
		if _, ns := objectKeyNamespaces[first]; ns && !strings.Contains(strings.TrimSuffix(second, "/"), "/") && !fileNameRE.MatchString(second) {
			continue // demo/web-1: an object's key, not a path
		}
		tok = strings.TrimSuffix(tok, "/")
		// internal/handlerctx.Enter: a package's path and one of its names.
		if dir, name, ok := cutLastDot(tok); ok && identRE.MatchString(name) && !fileNameRE.MatchString(tok) {
			if st, err := os.Stat(filepath.Join(root, dir)); err == nil && st.IsDir() {
				tok = dir
			}
		}
		out = append(out, tok)
	}
	// A token inside a longer path (`k8s.io/client-go/tools/cache`) must not
	// be taken for one of ours: keep only tokens that start the span or
	// follow a character no path has.
	var kept []string
	for _, p := range out {
		for _, idx := range indexAll(s.Text, p) {
			if idx == 0 || strings.ContainsRune(" `('\"=[", rune(s.Text[idx-1])) || (idx >= 2 && s.Text[idx-2:idx] == "./") {
				kept = append(kept, p)
				break
			}
		}
	}
	return kept
}

func cutLastDot(p string) (before, after string, ok bool) {
	i := strings.LastIndexByte(p, '.')
	if i < 0 || strings.Contains(p[i:], "/") {
		return "", "", false
	}
	return p[:i], p[i+1:], true
}

func indexAll(s, sub string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + 1
	}
}

// objectKeyNamespaces are namespaces the docs write object keys in
// (namespace/name) that are also top-level folder names: "demo/web-1" is a
// pod of the demo's namespace, not a path under demo/. A two-segment token
// under such a folder, with no file extension, is taken as a key.
var objectKeyNamespaces = map[string]string{
	"demo": "the embedded demo's namespace (demo/web-1, demo/busy, demo/doomed)",
}

// TopLevel lists the repository's top-level entries, the first segments a
// repository path can start with.
func TopLevel(root string) (map[string]bool, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	top := map[string]bool{}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	return top, nil
}

// fileFuncsRE finds "`file.go` · " in a line: a table that says where
// something is made, by file and function.
var fileFuncsRE = regexp.MustCompile("`([A-Za-z0-9_./\\-]+\\.go)` · ")

// FileDecl is one "`file.go` · `name`" claim of a doc: name is declared in
// file (a function, a method, a type, a const or var).
type FileDecl struct {
	Doc       string
	Line      int
	File      string // from the repository root
	Name      string
	Unchecked bool // the file could not be placed (a bare name with no folder before it on the line)
}

// FileDecls returns the claims of one markdown file under root: each
// backticked single name after "`file.go` · ", up to the next ";", "|" or
// "`file.go` · ".
// A bare file name (`delta_fifo.go`) is in the folder of the last full
// path before it on the line.
func FileDecls(root, doc string) ([]FileDecl, error) {
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		return nil, err
	}
	var out []FileDecl
	for i, line := range strings.Split(string(data), "\n") {
		dir := ""
		matches := fileFuncsRE.FindAllStringSubmatchIndex(line, -1)
		for k, m := range matches {
			file := line[m[2]:m[3]]
			unchecked := false
			if strings.Contains(file, "/") {
				dir = filepath.Dir(file)
			} else if dir != "" {
				file = filepath.Join(dir, file)
			} else {
				unchecked = true
			}
			rest := line[m[1]:]
			if k+1 < len(matches) {
				rest = line[m[1]:matches[k+1][0]]
			}
			if j := strings.IndexAny(rest, ";|"); j >= 0 {
				rest = rest[:j]
			}
			for _, n := range inlineRE.FindAllStringSubmatch(rest, -1) {
				if identRE.MatchString(n[1]) && !strings.Contains(n[1], ".") {
					out = append(out, FileDecl{Doc: doc, Line: i + 1, File: file, Name: n[1], Unchecked: unchecked})
				}
			}
		}
	}
	return out, nil
}

// Declares reports whether the Go file declares name at top level, or as
// a method of any type.
func Declares(file, name string) (bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return false, err
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name == name {
				return true, nil
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == name {
						return true, nil
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name == name {
							return true, nil
						}
					}
				}
			}
		}
	}
	return false, nil
}

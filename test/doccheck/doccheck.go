package doccheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// markerRE matches `<!-- code: <file> <decl> -->`.
var markerRE = regexp.MustCompile(`^<!-- code: (\S+) (\S+) -->$`)

// Quote is one marker and the fenced block after it.
type Quote struct {
	Doc, File, Decl string
	Line            int    // the marker's line in Doc, 1-based
	Got             string // what the doc shows now
	Want            string // the declaration as the source has it
}

// Check reads one markdown file under root and returns every quote in it,
// with the source's text filled in. A marker not followed by a fenced block,
// or naming a file or declaration that does not exist, is an error.
func Check(root, doc string) ([]Quote, error) {
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var quotes []Quote
	for i := 0; i < len(lines); i++ {
		m := markerRE.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		q := Quote{Doc: doc, File: m[1], Decl: m[2], Line: i + 1}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			return nil, fmt.Errorf("%s:%d: marker must be followed by a ``` block", doc, i+1)
		}
		end := i + 2
		for end < len(lines) && !strings.HasPrefix(lines[end], "```") {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: code block is not closed", doc, i+1)
		}
		q.Got = strings.Join(lines[i+2:end], "\n")
		q.Want, err = Extract(filepath.Join(root, q.File), q.Decl)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", doc, i+1, err)
		}
		quotes = append(quotes, q)
		i = end
	}
	return quotes, nil
}

// Extract returns the source text of one top-level declaration of a Go file,
// with its doc comment.
func Extract(file, decl string) (string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	recv, name, isMethod := strings.Cut(decl, ".")
	if !isMethod {
		name = recv
	}
	text := func(doc *ast.CommentGroup, node ast.Node) string {
		start := node.Pos()
		if doc != nil {
			start = doc.Pos()
		}
		return string(src[fset.Position(start).Offset:fset.Position(node.End()).Offset])
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name != name || (d.Recv != nil) != isMethod {
				continue
			}
			if isMethod && receiverName(d.Recv) != recv {
				continue
			}
			return text(d.Doc, d), nil
		case *ast.GenDecl:
			if isMethod {
				continue
			}
			for _, s := range d.Specs {
				var ident *ast.Ident
				switch s := s.(type) {
				case *ast.TypeSpec:
					ident = s.Name
				case *ast.ValueSpec:
					ident = s.Names[0]
				}
				if ident != nil && ident.Name == name {
					if len(d.Specs) == 1 {
						return text(d.Doc, d), nil
					}
					return text(nil, s), nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s has no declaration %q", file, decl)
}

func receiverName(fl *ast.FieldList) string {
	t := fl.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch t := t.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr: // generic receiver R[T]
		return t.X.(*ast.Ident).Name
	case *ast.IndexListExpr: // generic receiver R[T, U]
		return t.X.(*ast.Ident).Name
	}
	return ""
}

// Rewrite replaces each quoted block in doc with the source's text.
func Rewrite(root, doc string, quotes []Quote) error {
	path := filepath.Join(root, doc)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	qi := 0
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		if qi < len(quotes) && quotes[qi].Line == i+1 {
			out = append(out, lines[i+1]) // the opening fence
			out = append(out, strings.Split(quotes[qi].Want, "\n")...)
			j := i + 2
			for !strings.HasPrefix(lines[j], "```") {
				j++
			}
			i = j - 1
			qi++
		}
	}
	return os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644)
}

// Markdown lists, relative to root, root/README.md and root/ARCHITECTURE.md
// if they exist, and the .md files under root/docs.
func Markdown(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, top := range []string{"README.md", "ARCHITECTURE.md"} {
		if _, err := os.Stat(filepath.Join(root, top)); err == nil {
			out = append(out, top)
		}
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		out = append(out, rel)
	}
	return out, nil
}

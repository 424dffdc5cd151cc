package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A prediction can only be right if the page says what to call things: an
// answer "default/x: Deleted@tombstone(5)" needs the namespace, and a list
// of handler calls needs the pods' names. A participant with the right
// idea and a name of their own would otherwise be told that their
// reasoning is wrong (issue 39).

// keyName is an object's key as a namespace/name pair, standing on its own
// in an answer ("add default/p-0", "default/x: Updated@9"): not part of a
// path, an import path or a URL.
var keyName = regexp.MustCompile(`(?:^|[\s(\[])([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)/([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)(?:$|[\s:),\]])`)

// listenerName is a listener as the spans and the live view name it: the
// handler's type and its index ("*demo.tunableHandler#2").
var listenerName = regexp.MustCompile(`^\*?[a-z][a-z0-9]*\.[A-Za-z][A-Za-z0-9]*#[0-9]+$`)

// NamesOffPage returns, for a predict or investigate exercise, every name
// that its solution's answer uses and its page (the task, the package doc
// comment) does not give: an object key whose namespace or name the page
// never writes (in the key, or as a word of its own, the namespace as a
// namespace), and, for a prediction, a listener's name the page does not
// write. root is the repository's root. Build exercises
// have no such names: nil.
func NamesOffPage(root string, e *Exercise) ([]string, error) {
	if e.Kind == "build" {
		return nil, nil
	}
	lits, err := answerStrings(filepath.Join(root, e.SolutionPath()), e)
	if err != nil {
		return nil, err
	}
	task := taskOf(root, e)
	var missing []string
	add := func(s string) {
		if !slices.Contains(missing, s) {
			missing = append(missing, s)
		}
	}
	for _, lit := range lits {
		for _, m := range keyName.FindAllStringSubmatch(lit, -1) {
			key, ns, name := m[1]+"/"+m[2], m[1], m[2]
			if strings.Contains(task, key) {
				continue
			}
			if !namesNamespace(task, ns) {
				add("the namespace " + ns + " (of " + key + ")")
			}
			if !containsWord(task, name) {
				add("the name " + name + " (of " + key + ")")
			}
		}
		// An investigation reads a listener's name from the spans; a
		// prediction must be told it.
		if e.Kind == "predict" && listenerName.MatchString(lit) && !strings.Contains(task, lit) {
			add("the listener " + lit)
		}
	}
	return missing, nil
}

// namesNamespace reports whether task gives ns as a namespace: in a key
// ("default/x"), after the word namespace, or quoted; "the default queue"
// does not.
func namesNamespace(task, ns string) bool {
	return strings.Contains(task, ns+"/") || regexp.MustCompile(`namespace\s+["`+"`"+`]?`+regexp.QuoteMeta(ns)+`\b`).MatchString(task) || strings.Contains(task, `"`+ns+`"`)
}

// answerStrings are the string literals in the values of the package-level
// variables of e's files in dir: where a prediction's answer is written.
func answerStrings(dir string, e *Exercise) ([]string, error) {
	var out []string
	for _, f := range e.Files {
		pf, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, f), nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range pf.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					ast.Inspect(v, func(n ast.Node) bool {
						if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if u, err := strconv.Unquote(lit.Value); err == nil {
								out = append(out, u)
							}
						}
						return true
					})
				}
			}
		}
	}
	return out, nil
}

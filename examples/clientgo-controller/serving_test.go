package main

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
)

// Every http.Server this example builds, in any of its files, sets the
// timeouts that keep a client from holding it: ReadHeaderTimeout (or
// ReadTimeout), WriteTimeout and IdleTimeout, none of them zero. Users
// copy the example; a server without WriteTimeout is held by every client
// that never reads its answer (issue 38: 800 such clients, 900 goroutines,
// 165 MB).
func TestEveryServerSetsItsTimeouts(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	servers := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isHTTPServer(lit.Type) {
				return true
			}
			servers++
			set := map[string]bool{}
			for _, e := range lit.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if v, isLit := kv.Value.(*ast.BasicLit); !isLit || v.Value != "0" {
						set[kv.Key.(*ast.Ident).Name] = true
					}
				}
			}
			assert.True(t, set["ReadHeaderTimeout"] || set["ReadTimeout"], "%s: an http.Server without ReadHeaderTimeout or ReadTimeout", f)
			assert.True(t, set["WriteTimeout"], "%s: an http.Server without WriteTimeout", f)
			assert.True(t, set["IdleTimeout"], "%s: an http.Server without IdleTimeout", f)
			return true
		})
	}
	assert.Positive(t, servers, "found no http.Server literal: has the example stopped building its servers here?")

	s := newServer(nil)
	for name, d := range map[string]any{"ReadHeaderTimeout": s.ReadHeaderTimeout, "ReadTimeout": s.ReadTimeout,
		"WriteTimeout": s.WriteTimeout, "IdleTimeout": s.IdleTimeout} {
		assert.NotZero(t, d, name)
	}
}

func isHTTPServer(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "http" && sel.Sel.Name == "Server"
}

// The error handler the example installs writes a 2 MB OpenTelemetry
// error (a collector's answer, say) as one short line, and masks the
// password of a URL in it.
func TestOpenTelemetryErrorIsLoggedCut(t *testing.T) {
	previous := otel.GetErrorHandler()
	t.Cleanup(func() { otel.SetErrorHandler(previous) })
	var buf bytes.Buffer
	installErrorHandler(&buf)

	otel.Handle(errors.New(`traces export: failed to send to http://alice:S3CRETPW@collector:4318/v1/traces: 400 Bad Request (body: ` +
		strings.Repeat("x", 2<<20) + ")"))
	line := buf.String()
	assert.Equal(t, 1, strings.Count(line, "\n"), "one line")
	assert.True(t, strings.HasSuffix(line, "\n"))
	assert.Less(t, len(line), 512, "cut: %.80q…", line)
	assert.Contains(t, line, "more bytes)", "the line says it was cut")
	assert.NotContains(t, line, "S3CRETPW")
}

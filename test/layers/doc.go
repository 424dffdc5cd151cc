// Package layers holds the test that keeps the project's import arrows
// pointing one way (layers_test.go):
//
//	internal/* (below the chapters: apiserver, kube, tracing, spancheck, livepage, …)
//	  ↑
//	chapters/01-store ← 02-lister ← … ← 06-factory   (each only earlier ones)
//	  ↑
//	liveprobe (the live view's probe of a reflector: dropin's and the demo's)
//	  ↑
//	dropin, demo/* (above the chapters: the demo's parts)
//	  ↑
//	cmd/*, examples/*, workshop/*, test/*
//
// A chapter imports only earlier chapters and the helpers below them; a
// helper below the chapters imports no chapter and nothing above; nothing
// but programs, examples, the workshop and the tests imports what sits above
// the chapters. Go already refuses import cycles.
package layers

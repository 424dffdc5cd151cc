package main

import (
	"strings"
	"testing"
)

func TestPairsAndMedians(t *testing.T) {
	in := `goos: linux
BenchmarkIndexer/Add/ours-2         100  300 ns/op  50 B/op  2 allocs/op
BenchmarkIndexer/Add/ours-2         100  100 ns/op  50 B/op  2 allocs/op
BenchmarkIndexer/Add/ours-2         100  200 ns/op  50 B/op  2 allocs/op
BenchmarkIndexer/Add/client-go-2    100  400 ns/op  100 B/op  4 allocs/op
BenchmarkIndexer/Lonely/ours-2      100  1 ns/op
PASS`
	res, order, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if n := render(&out, res, order); n != 1 {
		t.Fatalf("rows = %d, want 1 (an unpaired benchmark has no row)\n%s", n, out.String())
	}
	want := "| Indexer/Add | ours | 200ns | 400ns | 0.50 | 50 | 100 | 0.50 | 2 | 4 | 0.50 |"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("table:\n%s\nwant row:\n%s", out.String(), want)
	}
}

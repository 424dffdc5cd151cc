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

func TestVsPairsPerRound(t *testing.T) {
	// Three rounds; the machine slows down in round 2 for both variants.
	in := `BenchmarkLiveView/traced-2           1  100 ns/op  50 cpu-ns/op  10 B/op  1 allocs/op
BenchmarkLiveView/with-liveview-2    1  103 ns/op  51 cpu-ns/op  12 B/op  1 allocs/op
BenchmarkLiveView/traced-2           1  200 ns/op  50 cpu-ns/op  10 B/op  1 allocs/op
BenchmarkLiveView/with-liveview-2    1  210 ns/op  52 cpu-ns/op  12 B/op  1 allocs/op
BenchmarkLiveView/traced-2           1  110 ns/op  50 cpu-ns/op  10 B/op  1 allocs/op
BenchmarkLiveView/with-liveview-2    1  111 ns/op  50 cpu-ns/op  12 B/op  1 allocs/op
BenchmarkOther/ours-2                1  5 ns/op
`
	res, order, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := parseVs("with-liveview=traced, ours-traced-one-key=ours")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if n := renderVs(&out, res, order, pairs); n != 1 {
		t.Fatalf("rows = %d, want 1 (BenchmarkOther has no baseline)\n%s", n, out.String())
	}
	// Medians 110 and 111 (ratio 1.01); per round 1.030, 1.050, 1.009;
	// CPU per round 1.02, 1.04, 1.00.
	want := "| LiveView | with-liveview ÷ traced | 3 | 111ns | 110ns | 1.01 | 1.030 [1.009–1.050] | 1.020 [1.000–1.040] | 1.20 | 1.00 |"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("table:\n%s\nwant row:\n%s", out.String(), want)
	}
	for _, bad := range []string{"with-liveview", "a/b=c", "=x"} {
		if _, err := parseVs(bad); err == nil {
			t.Errorf("parseVs(%q): no error", bad)
		}
	}
}

func TestRatiosMeasuredInOneLoop(t *testing.T) {
	in := `BenchmarkSharedInformer/handlers=1/ours-vs-one-key-2   10  400 ns/op  1.02 one-key÷ours  0.99 cpu-one-key÷ours
BenchmarkSharedInformer/handlers=1/client-go-2         10  200 ns/op
BenchmarkSharedInformer/handlers=1/ours-vs-one-key-2   10  410 ns/op  1.04 one-key÷ours  1.01 cpu-one-key÷ours
BenchmarkSharedInformer/handlers=1/ours-vs-one-key-2   10  420 ns/op  0.98 one-key÷ours  1.00 cpu-one-key÷ours
`
	res, order, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if n := render(&out, res, order); n != 0 {
		t.Fatalf("a -vs- benchmark got a row against client-go (its ns/op is two runs'):\n%s", out.String())
	}
	if n := renderRatios(&out, res, order); n != 2 {
		t.Fatalf("rows = %d, want 2\n%s", n, out.String())
	}
	for _, want := range []string{
		"| SharedInformer/handlers=1/ours-vs-one-key | cpu-one-key÷ours | 3 | 1.000 [0.990–1.010] |",
		"| SharedInformer/handlers=1/ours-vs-one-key | one-key÷ours | 3 | 1.020 [0.980–1.040] |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table:\n%s\nwant row:\n%s", out.String(), want)
		}
	}
}

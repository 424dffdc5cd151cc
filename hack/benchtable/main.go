// Command benchtable reads `go test -bench` output on stdin and prints a
// markdown table that sets each of our benchmarks beside client-go's.
//
// Benchmarks are paired by name: .../<case>/ours (and variants such as
// ours-traced) against .../<case>/client-go. With -count N the median of the N
// runs is used. Ratios are ours ÷ client-go, so below 1.00 means ours is
// faster or smaller.
//
//	go test -run '^$' -bench . -count 5 ./chapters/... | go run ./hack/benchtable
//
// With -vs variant=baseline[,variant=baseline...] it also sets two of our own
// variants side by side (with-liveview=traced: what the live view adds to a
// traced run; ours-traced-one-key=ours: what tracing one key costs). Besides
// the ratio of the medians it gives the per-round paired ratios: the i-th
// run of the variant divided by the i-th run of its baseline, which
// hack/bench.sh measures seconds apart in the same round, with their median
// and spread. A drift of the machine's load between rounds moves both runs
// of a pair and cancels in their ratio; the spread says how far apart one
// round's two runs can still fall, that is, what difference the run can
// resolve at all.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// result holds every run's measurements for one benchmark name.
type result struct {
	ns, bytes, allocs []float64
	extra             map[string][]float64 // custom metrics such as ns/event
}

var lineRE = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func parse(r io.Reader) (map[string]*result, []string, error) {
	results := map[string]*result{}
	var order []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		res := results[name]
		if res == nil {
			res = &result{extra: map[string][]float64{}}
			results[name] = res
			order = append(order, name)
		}
		fields := strings.Fields(m[2])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			switch unit := fields[i+1]; unit {
			case "ns/op":
				res.ns = append(res.ns, v)
			case "B/op":
				res.bytes = append(res.bytes, v)
			case "allocs/op":
				res.allocs = append(res.allocs, v)
			default:
				res.extra[unit] = append(res.extra[unit], v)
			}
		}
	}
	return results, order, sc.Err()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratio(a, b float64) string {
	if b == 0 {
		if a == 0 {
			return "1.00"
		}
		return "—"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func human(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fs", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.2fµs", v/1e3)
	}
	return fmt.Sprintf("%.0fns", v)
}

func render(w io.Writer, results map[string]*result, order []string) int {
	fmt.Fprintln(w, "| benchmark | variant | time/op | client-go | ratio | B/op | client-go | ratio | allocs/op | client-go | ratio |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	rows := 0
	for _, name := range order {
		i := strings.LastIndex(name, "/")
		if i < 0 {
			continue
		}
		variant := name[i+1:]
		// A ...-vs-... benchmark measures two of ours in one loop and
		// reports their ratio (renderRatios); its ns/op is the pair's.
		if !strings.HasPrefix(variant, "ours") || strings.Contains(variant, "-vs-") {
			continue
		}
		theirs := results[name[:i]+"/client-go"]
		if theirs == nil {
			continue
		}
		ours := results[name]
		on, tn := median(ours.ns), median(theirs.ns)
		ob, tb := median(ours.bytes), median(theirs.bytes)
		oa, ta := median(ours.allocs), median(theirs.allocs)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.0f | %.0f | %s | %.0f | %.0f | %s |\n",
			strings.TrimPrefix(name[:i], "Benchmark"), variant, human(on), human(tn), ratio(on, tn),
			ob, tb, ratio(ob, tb), oa, ta, ratio(oa, ta))
		rows++
	}
	return rows
}

// cpuMetric is the process CPU time per iteration some benchmarks report
// beside the wall clock (less moved by other work on a shared machine).
const cpuMetric = "cpu-ns/op"

// vsPair is one -vs comparison: variant ÷ baseline, two of our variants.
type vsPair struct{ variant, baseline string }

func parseVs(s string) ([]vsPair, error) {
	var out []vsPair
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, b, ok := strings.Cut(p, "=")
		if !ok || v == "" || b == "" || strings.Contains(v, "/") || strings.Contains(b, "/") {
			return nil, fmt.Errorf("-vs %q: want variant=baseline (the last element of two benchmark names), e.g. with-liveview=traced", p)
		}
		out = append(out, vsPair{v, b})
	}
	return out, nil
}

// paired is the per-round ratios a[i]/b[i]; nil unless both ran the same
// number of times (one run each per round, as hack/bench.sh does).
func paired(a, b []float64) []float64 {
	if len(a) != len(b) || len(a) == 0 {
		return nil
	}
	out := make([]float64, len(a))
	for i := range a {
		if b[i] == 0 {
			return nil
		}
		out[i] = a[i] / b[i]
	}
	return out
}

// spread is "median [min–max]" of per-round ratios, or "—".
func spread(r []float64) string {
	if len(r) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f [%.3f–%.3f]", median(r), slices.Min(r), slices.Max(r))
}

// renderVs prints a table of variant ÷ baseline for every benchmark that
// has both, and returns its rows.
func renderVs(w io.Writer, results map[string]*result, order []string, pairs []vsPair) int {
	rows := 0
	for _, name := range order {
		i := strings.LastIndex(name, "/")
		if i < 0 {
			continue
		}
		for _, p := range pairs {
			if name[i+1:] != p.variant {
				continue
			}
			base := results[name[:i]+"/"+p.baseline]
			if base == nil {
				continue
			}
			if rows == 0 {
				fmt.Fprintln(w, "| benchmark | variant ÷ baseline | rounds | time/op | baseline | ratio of medians | paired per round: median [min–max] | CPU/op paired per round | B/op ratio | allocs/op ratio |")
				fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
			}
			v := results[name]
			vn, bn := median(v.ns), median(base.ns)
			fmt.Fprintf(w, "| %s | %s ÷ %s | %d | %s | %s | %s | %s | %s | %s | %s |\n",
				strings.TrimPrefix(name[:i], "Benchmark"), p.variant, p.baseline, min(len(v.ns), len(base.ns)),
				human(vn), human(bn), ratio(vn, bn), spread(paired(v.ns, base.ns)),
				spread(paired(v.extra[cpuMetric], base.extra[cpuMetric])),
				ratio(median(v.bytes), median(base.bytes)), ratio(median(v.allocs), median(base.allocs)))
			rows++
		}
	}
	return rows
}

// renderRatios prints the ratio metrics some benchmarks report themselves
// (a unit with "÷", such as one-key÷ours: two variants measured in one loop,
// in alternating order), the median and spread over the rounds.
func renderRatios(w io.Writer, results map[string]*result, order []string) int {
	rows := 0
	for _, name := range order {
		units := make([]string, 0, len(results[name].extra))
		for u := range results[name].extra {
			if strings.Contains(u, "÷") {
				units = append(units, u)
			}
		}
		sort.Strings(units)
		for _, u := range units {
			if rows == 0 {
				fmt.Fprintln(w, "| benchmark | ratio measured in one loop | rounds | median [min–max] |")
				fmt.Fprintln(w, "|---|---|---:|---:|")
			}
			v := results[name].extra[u]
			fmt.Fprintf(w, "| %s | %s | %d | %s |\n", strings.TrimPrefix(name, "Benchmark"), u, len(v), spread(v))
			rows++
		}
	}
	return rows
}

func main() {
	vs := flag.String("vs", "", "also compare our own variants: variant=baseline[,...], e.g. with-liveview=traced")
	flag.Parse()
	pairs, err := parseVs(*vs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(2)
	}
	results, order, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	var buf strings.Builder
	n := render(&buf, results, order)
	if n > 0 {
		fmt.Print(buf.String())
	}
	buf.Reset()
	if renderRatios(&buf, results, order) > 0 {
		if n > 0 {
			fmt.Println()
		}
		fmt.Print(buf.String())
		n++
	}
	if len(pairs) > 0 {
		if n > 0 {
			fmt.Println()
		}
		if renderVs(os.Stdout, results, order, pairs) == 0 {
			fmt.Fprintf(os.Stderr, "benchtable: -vs %s: no benchmark has both variants in the input\n", *vs)
			os.Exit(1)
		}
		return
	}
	if n == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no pairs of .../ours and .../client-go benchmarks in the input (for two of our variants, use -vs)")
		os.Exit(1)
	}
}

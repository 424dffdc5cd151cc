// Command benchtable reads `go test -bench` output on stdin and prints a
// markdown table that sets each of our benchmarks beside client-go's.
//
// Benchmarks are paired by name: .../<case>/ours (and variants such as
// ours-traced) against .../<case>/client-go. With -count N the median of the N
// runs is used. Ratios are ours ÷ client-go, so below 1.00 means ours is
// faster or smaller.
//
//	go test -run '^$' -bench . -count 5 ./chapters/... | go run ./hack/benchtable
package main

import (
	"bufio"
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
		if !strings.HasPrefix(variant, "ours") {
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

func main() {
	results, order, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if render(os.Stdout, results, order) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no pairs of .../ours and .../client-go benchmarks in the input")
		os.Exit(1)
	}
}

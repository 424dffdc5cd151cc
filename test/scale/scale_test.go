package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

func envInt(t testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive whole number", name, v)
	}
	return n
}

var paths = []scalegen.Path{scalegen.WatchList, scalegen.PagedList}

// Both informers, both paths, on 2,000 pods (500 under -race): the handlers of the two
// libraries are called alike (the same adds, updates and deletes), the 410
// made each reflector ask again, and every measure was taken.
func TestHarnessSmoke(t *testing.T) {
	pods, updates := 2000, 2000
	if testutil.Race {
		pods, updates = 500, 500
	}
	for _, path := range paths {
		t.Run(path.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var calls [][Handlers][3]int64
			for _, lib := range Libraries {
				res, err := Run(ctx, lib, Config{Pods: pods, Updates: updates, Seed: 1, Path: path})
				require.NoError(t, err)
				for k := range Handlers {
					require.Equal(t, [3]int64{int64(pods), int64(pods + updates), 0}, res.Calls[k], "%s handler %d: adds, updates, deletes", lib.Name, k)
				}
				calls = append(calls, res.Calls)
				if path == scalegen.WatchList {
					require.Zero(t, res.Lists, "%s listed on a stream", lib.Name)
					require.Equal(t, int64(2), res.Watches, "%s: the watch-list, then another after the 410", lib.Name)
				} else {
					// Pages of client-go's 500, listed twice.
					require.Equal(t, int64(2*((pods+499)/500)), res.Lists, "%s: pages of the LIST and of the relist", lib.Name)
					require.Equal(t, int64(2), res.Watches, "%s", lib.Name)
				}
				require.Positive(t, res.Sync)
				require.Positive(t, res.SourceList)
				require.Positive(t, res.Relist)
				require.Positive(t, res.Steady, "%s", lib.Name)
				require.GreaterOrEqual(t, res.RelistPeak, res.Steady/2, "%s", lib.Name)
				{
					// The window's CPU taken apart by its profile (at
					// 100 a second, a few samples here: cpusplit_test
					// checks the counting): the shares are of the whole.
					require.True(t, res.OwnMeasured, "%s: the update window was profiled", lib.Name)
					require.InDelta(t, float64(res.CPUPerEvent), float64(res.ProfSourceCPUPerEvent+res.ProfGCCPUPerEvent+res.OwnCPUPerEvent), float64(time.Microsecond), "%s", lib.Name)
				}
			}
			require.Equal(t, calls[0], calls[1], "client-go's handler calls, then ours")
			if path != scalegen.WatchList {
				return
			}
			for _, lib := range SharedVariants {
				res, err := Run(ctx, lib, Config{Pods: pods, Updates: updates, Seed: 1, Path: path})
				require.NoError(t, err)
				require.Equal(t, calls[0], res.Calls, "client-go's handler calls, then %s's", lib.Name)
				require.Positive(t, res.Steady, "%s", lib.Name)
			}
		})
	}
}

// BenchmarkScale runs client-go's informer and ours through Run, in turn
// (the order swapped every round), on each path, and logs the table of
// docs/performance.md: the medians over the rounds and ours ÷ client-go.
// SCALE_PODS (default 150000), SCALE_UPDATES (200000) and SCALE_ROUNDS (1)
// size it; SCALE_PROFILE_DIR, if set, is where each pass's steady-state CPU
// profile is written (for go tool pprof); run it with -benchtime=1x (hack/bench.sh scale does). 200,000
// updates, not fewer: the steady state's CPU profile (Result.OwnCPUPerEvent)
// gets about 230 samples a CPU-second here, and with 50,000 updates the
// informer's own share of them was a few dozen, too few to tell 0.9 from
// 0.6.
func BenchmarkScale(b *testing.B) {
	pods := envInt(b, "SCALE_PODS", 150_000)
	updates := envInt(b, "SCALE_UPDATES", 200_000)
	rounds := envInt(b, "SCALE_ROUNDS", 1)
	for _, path := range paths {
		b.Run(path.String(), func(b *testing.B) {
			results := map[string][]Result{}
			for i := 0; i < b.N*rounds; i++ {
				order := slices.Clone(Libraries)
				if path == scalegen.WatchList {
					order = append(order, SharedVariants...)
				}
				if i%2 == 1 {
					slices.Reverse(order)
				}
				for _, lib := range order {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
					cfg := Config{Pods: pods, Updates: updates, Seed: 1, Path: path, ProfileHz: 1000}
					if dir := os.Getenv("SCALE_PROFILE_DIR"); dir != "" {
						cfg.ProfileFile = filepath.Join(dir, fmt.Sprintf("%s-%s-round%d.pprof", path, strings.ReplaceAll(lib.Name, " ", "-"), i+1))
					}
					res, err := Run(ctx, lib, cfg)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					// Each pass's line, so the spread behind a median shows.
					b.Logf("round %d, %s: sync %v; CPU per update %v (the source alone %v; by the profile: source %v, GC %v, own %v of %d samples)",
						i+1, lib.Name, res.Sync.Round(time.Millisecond), res.CPUPerEvent.Round(100*time.Nanosecond),
						res.SourceCPUPerEvent.Round(100*time.Nanosecond), res.ProfSourceCPUPerEvent.Round(100*time.Nanosecond),
						res.ProfGCCPUPerEvent.Round(100*time.Nanosecond), res.OwnCPUPerEvent.Round(100*time.Nanosecond), res.ProfileSamples)
					results[lib.Name] = append(results[lib.Name], res)
				}
			}
			cg, ours := median(results["client-go"]), median(results["ours"])
			b.ReportMetric(ratio(float64(ours.Sync), float64(cg.Sync)), "sync-ratio")
			b.ReportMetric(ratio(float64(ours.Steady), float64(cg.Steady)), "steady-ratio")
			b.ReportMetric(ratio(float64(ours.RelistPeak), float64(cg.RelistPeak)), "relist-peak-ratio")
			b.ReportMetric(ratio(float64(ours.CPUPerEvent-ours.SourceCPUPerEvent), float64(cg.CPUPerEvent-cg.SourceCPUPerEvent)), "cpu-per-event-ratio")
			if cg.OwnMeasured && ours.OwnMeasured {
				b.ReportMetric(ratio(float64(ours.OwnCPUPerEvent), float64(cg.OwnCPUPerEvent)), "own-cpu-per-event-ratio")
			}
			b.Log("\n" + table(path, pods, updates, len(results["ours"]), cg, ours))
			if path == scalegen.WatchList {
				var vs []Result
				for _, lib := range SharedVariants {
					vs = append(vs, median(results[lib.Name]))
				}
				b.ReportMetric(ratio(float64(vs[0].Steady), float64(cg.Steady)), "shared-steady-ratio")
				b.Log("\n" + sharedTable(path, pods, updates, len(results["ours"]), cg, ours, vs))
			}
		})
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// median takes each measure's median over the rounds separately.
func median(rs []Result) Result {
	pick := func(f func(Result) float64) float64 {
		v := make([]float64, len(rs))
		for k, r := range rs {
			v[k] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Result{
		Sync:           time.Duration(pick(func(r Result) float64 { return float64(r.Sync) })),
		SourceList:     time.Duration(pick(func(r Result) float64 { return float64(r.SourceList) })),
		Steady:         uint64(pick(func(r Result) float64 { return float64(r.Steady) })),
		RelistPeak:     uint64(pick(func(r Result) float64 { return float64(r.RelistPeak) })),
		RelistPeakLive: uint64(pick(func(r Result) float64 { return float64(r.RelistPeakLive) })),
		UpdatesPeak:    uint64(pick(func(r Result) float64 { return float64(r.UpdatesPeak) })),
		Relist:         time.Duration(pick(func(r Result) float64 { return float64(r.Relist) })),
		CPUPerEvent:    time.Duration(pick(func(r Result) float64 { return float64(r.CPUPerEvent) })),
		AllocsPerEvent: pick(func(r Result) float64 { return r.AllocsPerEvent }),
		BytesPerEvent:  pick(func(r Result) float64 { return r.BytesPerEvent }),

		ProfSourceCPUPerEvent: time.Duration(pick(func(r Result) float64 { return float64(r.ProfSourceCPUPerEvent) })),
		ProfGCCPUPerEvent:     time.Duration(pick(func(r Result) float64 { return float64(r.ProfGCCPUPerEvent) })),
		OwnCPUPerEvent:        time.Duration(pick(func(r Result) float64 { return float64(r.OwnCPUPerEvent) })),
		OwnMeasured:           !slices.ContainsFunc(rs, func(r Result) bool { return !r.OwnMeasured }),
		ProfileSamples:        int(pick(func(r Result) float64 { return float64(r.ProfileSamples) })),

		SourceCPUPerEvent:    time.Duration(pick(func(r Result) float64 { return float64(r.SourceCPUPerEvent) })),
		SourceAllocsPerEvent: pick(func(r Result) float64 { return r.SourceAllocsPerEvent }),
		SourceBytesPerEvent:  pick(func(r Result) float64 { return r.SourceBytesPerEvent }),
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%.1fµs", float64(d)/1e3) }

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func table(path scalegen.Path, pods, updates, rounds int, cg, ours Result) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, %d pods, %d updates, %d round(s), medians:\n\n", path, pods, updates, rounds)
	sb.WriteString("| measure | client-go | ours | ours ÷ client-go |\n|---|---:|---:|---:|\n")
	row := func(name, a, b string, r float64) { fmt.Fprintf(&sb, "| %s | %s | %s | %.2f |\n", name, a, b, r) }
	row("time to sync", cg.Sync.Round(time.Millisecond).String(), ours.Sync.Round(time.Millisecond).String(), ratio(float64(ours.Sync), float64(cg.Sync)))
	fmt.Fprintf(&sb, "| the source alone, serving that state (the floor under sync) | %s | %s | |\n",
		cg.SourceList.Round(time.Millisecond), ours.SourceList.Round(time.Millisecond))
	fmt.Fprintf(&sb, "| time to sync ÷ the source alone | %.2f× | %.2f× | |\n",
		ratio(float64(cg.Sync), float64(cg.SourceList)), ratio(float64(ours.Sync), float64(ours.SourceList)))
	row("steady heap", mib(cg.Steady), mib(ours.Steady), ratio(float64(ours.Steady), float64(cg.Steady)))
	row("relist: peak heap (sampled)", mib(cg.RelistPeak), mib(ours.RelistPeak), ratio(float64(ours.RelistPeak), float64(cg.RelistPeak)))
	fmt.Fprintf(&sb, "| relist: peak ÷ steady | %.2f× | %.2f× | |\n", ratio(float64(cg.RelistPeak), float64(cg.Steady)), ratio(float64(ours.RelistPeak), float64(ours.Steady)))
	row("relist: peak live heap (at GCs)", mib(cg.RelistPeakLive), mib(ours.RelistPeakLive), ratio(float64(ours.RelistPeakLive), float64(cg.RelistPeakLive)))
	fmt.Fprintf(&sb, "| relist: peak live ÷ steady | %.2f× | %.2f× | |\n", ratio(float64(cg.RelistPeakLive), float64(cg.Steady)), ratio(float64(ours.RelistPeakLive), float64(ours.Steady)))
	row("the updates at steady state: peak heap (sampled)", mib(cg.UpdatesPeak), mib(ours.UpdatesPeak), ratio(float64(ours.UpdatesPeak), float64(cg.UpdatesPeak)))
	fmt.Fprintf(&sb, "| relist: peak ÷ the updates' peak (sampled) | %.2f× | %.2f× | |\n", ratio(float64(cg.RelistPeak), float64(cg.UpdatesPeak)), ratio(float64(ours.RelistPeak), float64(ours.UpdatesPeak)))
	row("relist: duration", cg.Relist.Round(time.Millisecond).String(), ours.Relist.Round(time.Millisecond).String(), ratio(float64(ours.Relist), float64(cg.Relist)))
	row("CPU per update, whole process", us(cg.CPUPerEvent), us(ours.CPUPerEvent), ratio(float64(ours.CPUPerEvent), float64(cg.CPUPerEvent)))
	row("allocations per update, whole process", fmt.Sprintf("%.1f", cg.AllocsPerEvent), fmt.Sprintf("%.1f", ours.AllocsPerEvent), ratio(ours.AllocsPerEvent, cg.AllocsPerEvent))
	fmt.Fprintf(&sb, "| the source alone, per update: CPU, allocations | %s, %.1f | %s, %.1f | |\n",
		us(cg.SourceCPUPerEvent), cg.SourceAllocsPerEvent, us(ours.SourceCPUPerEvent), ours.SourceAllocsPerEvent)
	cgCPU, oursCPU := cg.CPUPerEvent-cg.SourceCPUPerEvent, ours.CPUPerEvent-ours.SourceCPUPerEvent
	row("CPU per update, less the source", us(cgCPU), us(oursCPU), ratio(float64(oursCPU), float64(cgCPU)))
	cgA, oursA := cg.AllocsPerEvent-cg.SourceAllocsPerEvent, ours.AllocsPerEvent-ours.SourceAllocsPerEvent
	row("allocations per update, less the source", fmt.Sprintf("%.1f", cgA), fmt.Sprintf("%.1f", oursA), ratio(oursA, cgA))
	cgB, oursB := cg.BytesPerEvent-cg.SourceBytesPerEvent, ours.BytesPerEvent-ours.SourceBytesPerEvent
	row("bytes allocated per update, less the source", fmt.Sprintf("%.0f", cgB), fmt.Sprintf("%.0f", oursB), ratio(oursB, cgB))
	if cg.OwnMeasured && ours.OwnMeasured {
		fmt.Fprintf(&sb, "| the same CPU per update by a profile of the window (%d and %d samples): the source | %s | %s | |\n",
			cg.ProfileSamples, ours.ProfileSamples, us(cg.ProfSourceCPUPerEvent), us(ours.ProfSourceCPUPerEvent))
		row("… the GC's own goroutines", us(cg.ProfGCCPUPerEvent), us(ours.ProfGCCPUPerEvent), ratio(float64(ours.ProfGCCPUPerEvent), float64(cg.ProfGCCPUPerEvent)))
		row("… **the informer's own** (the rest)", us(cg.OwnCPUPerEvent), us(ours.OwnCPUPerEvent), ratio(float64(ours.OwnCPUPerEvent), float64(cg.OwnCPUPerEvent)))
	} else {
		sb.WriteString("| CPU per update by a profile of the window | not measured: another CPU profile was running | | |\n")
	}
	return sb.String()
}

// sharedTable is the table of docs/performance.md's "Strings shared": ours
// with each of SharedVariants' transforms beside client-go's and ours
// without, as ratios to client-go's.
func sharedTable(path scalegen.Path, pods, updates, rounds int, cg, ours Result, vs []Result) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s, %d pods, %d updates, %d round(s), medians; ours with a StringTable:\n\n", path, pods, updates, rounds)
	sb.WriteString("| measure | client-go | ours | ÷ |")
	for _, lib := range SharedVariants {
		fmt.Fprintf(&sb, " %s | ÷ |", lib.Name)
	}
	sb.WriteString("\n|---|---:|---:|---:|")
	for range SharedVariants {
		sb.WriteString("---:|---:|")
	}
	sb.WriteString("\n")
	row := func(name string, f func(Result) float64, show func(float64) string) {
		base := f(cg)
		fmt.Fprintf(&sb, "| %s | %s | %s | %.2f |", name, show(base), show(f(ours)), ratio(f(ours), base))
		for _, v := range vs {
			fmt.Fprintf(&sb, " %s | %.2f |", show(f(v)), ratio(f(v), base))
		}
		sb.WriteString("\n")
	}
	mibf := func(v float64) string { return mib(uint64(v)) }
	row("steady heap", func(r Result) float64 { return float64(r.Steady) }, mibf)
	row("steady heap per pod", func(r Result) float64 { return float64(r.Steady) / float64(pods) }, func(v float64) string { return fmt.Sprintf("%.0f B", v) })
	row("relist: peak live heap (at GCs)", func(r Result) float64 { return float64(r.RelistPeakLive) }, mibf)
	row("time to sync", func(r Result) float64 { return float64(r.Sync) }, func(v float64) string { return time.Duration(v).Round(time.Millisecond).String() })
	row("CPU per update, less the source", func(r Result) float64 { return float64(r.CPUPerEvent - r.SourceCPUPerEvent) }, func(v float64) string { return us(time.Duration(v)) })
	row("allocations per update, less the source", func(r Result) float64 { return r.AllocsPerEvent - r.SourceAllocsPerEvent }, func(v float64) string { return fmt.Sprintf("%.1f", v) })
	row("bytes allocated per update, less the source", func(r Result) float64 { return r.BytesPerEvent - r.SourceBytesPerEvent }, func(v float64) string { return fmt.Sprintf("%.0f", v) })
	return sb.String()
}

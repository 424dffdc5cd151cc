// Package scale measures client-go's shared informer and ours (through
// package dropin) at the size of a large cluster: by default 150,000
// realistic pods (internal/scalegen), four counting handlers, on both
// first-request paths (the watch-list stream and a paged LIST). It is ours;
// client-go has no counterpart.
//
// [Run] takes one informer through one pass: sync, a relist forced by a 410,
// then a sustained stream of updates, and returns what it measured.
// BenchmarkScale runs both libraries in turn, the order swapped every round,
// and prints the table docs/performance.md keeps ("At the scale of a
// cluster"); hack/bench.sh scale runs it. TestHarnessSmoke runs the same
// passes on 2,000 pods in the normal test run, and fails if the two
// informers' handlers were not called alike or no relist happened.
package scale

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
)

// Library is one of the two informers compared.
type Library struct {
	Name string
	New  func(lw cache.ListerWatcher) cache.SharedIndexInformer
}

// Libraries are client-go v0.37.2's shared informer and ours behind
// client-go's interface (dropin), each with the namespace index, as a
// factory builds them.
var Libraries = []Library{
	{"client-go", func(lw cache.ListerWatcher) cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}},
	{"ours", func(lw cache.ListerWatcher) cache.SharedIndexInformer {
		return dropin.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}},
}

// SharedVariants are ours (dropin) with a [dropin.StringTable] as the
// transform, each table made with the informer (so the steady heap counts
// it): strings shared, then strings and managedFields' FieldsV1 bytes.
// BenchmarkScale runs them on the watch-list path beside Libraries; what
// they change (the steady heap, the cost per update) does not depend on
// the path.
var SharedVariants = []Library{
	{"ours, strings shared", func(lw cache.ListerWatcher) cache.SharedIndexInformer {
		return withTable(lw, dropin.StringTableOptions{})
	}},
	{"ours, strings and FieldsV1 shared", func(lw cache.ListerWatcher) cache.SharedIndexInformer {
		return withTable(lw, dropin.StringTableOptions{ShareFieldsV1: true})
	}},
}

func withTable(lw cache.ListerWatcher, opts dropin.StringTableOptions) cache.SharedIndexInformer {
	inf := dropin.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := inf.SetTransform(dropin.NewStringTable(opts).Transform); err != nil {
		panic(err) // not started yet: SetTransform cannot fail here
	}
	return inf
}

// Handlers is how many counting handlers every informer gets.
const Handlers = 4

// Config is one pass's workload.
type Config struct {
	Pods    int // pods in the source
	Updates int // updates streamed at steady state
	Seed    uint64
	Path    scalegen.Path
	// ProfileHz is the CPU profile's sampling rate over the steady state
	// (0: the profiler's 100 a second of CPU; see profileShares). Linux
	// fires a thread's CPU-time timer on its scheduler tick, so a rate
	// above the kernel's tick (CONFIG_HZ, 250 on this project's machine)
	// gives about the tick's rate: BenchmarkScale asks 1,000 and gets
	// about 230 samples a CPU-second.
	ProfileHz int
	// ProfileFile, if not empty, is where the steady state's CPU profile
	// is written as well (SCALE_PROFILE_DIR in BenchmarkScale), for go
	// tool pprof.
	ProfileFile string
}

// Result is what one pass measured. Heap figures are the Go heap's object
// bytes less the baseline taken before the informer was built (after a GC,
// the source already made), so they are what the informer holds.
type Result struct {
	// Sync is the time from RunWithContext to HasSynced reporting true
	// (polled every millisecond).
	Sync time.Duration
	// Steady is the live heap once synced and every handler has had every
	// add: read after two forced GCs.
	Steady uint64
	// RelistPeak is the largest heap sampled (scalegen.HeapSampler:
	// runtime/metrics' /memory/classes/heap/objects:bytes, every 2 ms) from the 410 to the
	// moment every handler had the relist's updates: live objects and the
	// garbage not yet collected, what the process's memory must hold.
	RelistPeak uint64
	// RelistPeakLive is the largest live heap that a GC cycle marked in
	// that window (/gc/heap/live:bytes): the relist's true live peak, seen
	// only at GCs.
	RelistPeakLive uint64
	// UpdatesPeak is the largest heap sampled (the same sampler) while
	// the steady state's updates streamed: what the process needs when
	// nothing but updates happen, with the default GOGC letting garbage
	// grow to about the live heap between collections. A relist's sampled
	// peak is to be read against it: a relist whose peak is no higher
	// asks no more memory of the process than its steady state does.
	UpdatesPeak uint64
	// Relist is the time from the reflector's first request after the 410
	// (its backoff over) to every handler having had the relist's updates.
	Relist time.Duration
	// CPUPerEvent, AllocsPerEvent and BytesPerEvent are the process's CPU
	// time (internal/cputime), heap allocations and bytes allocated per
	// update, over Config.Updates updates at steady state: the whole
	// process, the source's generating of each pod included, as a client's
	// decoding would be.
	CPUPerEvent    time.Duration
	AllocsPerEvent float64
	BytesPerEvent  float64
	// SourceCPUPerEvent, SourceAllocsPerEvent and SourceBytesPerEvent are
	// what the source alone spends making one update's pod, measured after
	// the stream with the informer idle: the part of the above that is not
	// the informer's.
	SourceCPUPerEvent    time.Duration
	SourceAllocsPerEvent float64
	SourceBytesPerEvent  float64
	// The same window's CPU time taken apart by a CPU profile of it
	// (cpusplit.go: each thread sampled on its own CPU time, so the shares
	// hold on a loaded machine), the shares scaled to CPUPerEvent; false
	// OwnMeasured if another CPU profile was running. ProfSourceCPU is the
	// source's watch goroutine generating and sending each change (and the
	// driver recording it), ProfGCCPU the garbage collector's own
	// goroutines, OwnCPU the rest: the informer's goroutines and the
	// scheduler's hand-offs between them. ProfileSamples is how many
	// samples the shares rest on.
	ProfSourceCPUPerEvent time.Duration
	ProfGCCPUPerEvent     time.Duration
	OwnCPUPerEvent        time.Duration
	OwnMeasured           bool
	ProfileSamples        int
	// SourceList is what the source alone takes to serve the first
	// request's state as the informer asks for it, with no informer
	// reading: every page of a paged LIST of client-go's 500, requested one
	// after another with its continue token, as a pager must (a page's token
	// comes in the page before it), or every ADDED event of a watch-list
	// stream, read as fast as they come. Measured on a fresh source before
	// the informer is built. A sync cannot take less than this, whatever
	// the informer does: it is the floor under the "time to sync" row.
	SourceList time.Duration
	// Calls is each handler's (adds, updates, deletes) at the end.
	Calls [Handlers][3]int64
	// Lists and Watches are the requests the source served.
	Lists, Watches int64
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// waitAll waits until every counter has counted total calls, or ctx ends.
func waitAll(ctx context.Context, hs []*scalegen.Counter, total int64, what string) error {
	for k, h := range hs {
		select {
		case <-h.Reach(total):
		case <-ctx.Done():
			return fmt.Errorf("%s: handler %d counted %d of %d calls when the pass timed out", what, k, h.Total(), total)
		}
	}
	return nil
}

// Run takes one informer of lib through one pass over cfg's workload and
// returns what it measured: built and run on a fresh source until synced
// and every handler has had every add; the source's watches then end with
// a 410, and the informer relists (every pod again: an update to every
// handler); then cfg.Updates updates are streamed and every handler waits
// for the last. The informer is stopped before Run returns. ctx bounds the
// pass: a pass that stalls returns an error saying where.
func Run(ctx context.Context, lib Library, cfg Config) (res Result, err error) {
	n, u := int64(cfg.Pods), int64(cfg.Updates)
	gen := scalegen.NewGenerator(cfg.Seed)
	src := scalegen.NewSource(gen, cfg.Pods, cfg.Path)

	if res.SourceList, err = sourceListTime(ctx, scalegen.NewSource(gen, cfg.Pods, cfg.Path)); err != nil {
		return res, fmt.Errorf("%s: the source alone: %w", lib.Name, err)
	}
	base := scalegen.LiveHeap()
	inf := lib.New(src)
	hs := make([]*scalegen.Counter, Handlers)
	for k := range hs {
		hs[k] = &scalegen.Counter{}
		if _, err := inf.AddEventHandler(hs[k]); err != nil {
			return res, fmt.Errorf("%s: AddEventHandler: %w", lib.Name, err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	defer func() { stop(); <-stopped }()
	start := time.Now()
	go func() { defer close(stopped); inf.RunWithContext(runCtx) }()
	for !inf.HasSynced() {
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("%s: not synced when the pass timed out", lib.Name)
		case <-time.After(time.Millisecond):
		}
	}
	res.Sync = time.Since(start)
	if err := waitAll(ctx, hs, n, lib.Name+" sync"); err != nil {
		return res, err
	}
	res.Steady = sub(scalegen.LiveHeap(), base)

	// A relist forced by a 410: every pod comes again, and each handler
	// hears an update per pod (the replaced state's Sync deltas).
	sm := scalegen.StartHeapSampler()
	src.Expire()
	if err := waitAll(ctx, hs, 2*n, lib.Name+" relist"); err != nil {
		sm.End()
		return res, err
	}
	end := time.Now()
	peak, peakLive := sm.End()
	res.RelistPeak, res.RelistPeakLive = sub(peak, base), sub(peakLive, base)
	if first := src.FirstRequest(); !first.IsZero() {
		res.Relist = end.Sub(first)
	}

	// Steady state: a sustained stream of updates.
	runtime.GC()
	var cpu time.Duration
	var a1, b1 uint64
	cpu0 := cputime.Process()
	_, _, a0, b0 := scalegen.ReadHeap()
	um := scalegen.StartHeapSampler()
	shares, profiled, err := profileShares(cfg.ProfileHz, cfg.ProfileFile, func() error {
		for k := range cfg.Updates {
			src.Update(k % cfg.Pods)
		}
		err := waitAll(ctx, hs, 2*n+u, lib.Name+" updates")
		cpu = cputime.Process() - cpu0
		_, _, a1, b1 = scalegen.ReadHeap()
		return err
	})
	updatesPeak, _ := um.End()
	res.UpdatesPeak = sub(updatesPeak, base)
	if err != nil {
		return res, err
	}
	if u > 0 {
		res.CPUPerEvent = cpu / time.Duration(u)
		res.AllocsPerEvent = float64(a1-a0) / float64(u)
		res.BytesPerEvent = float64(b1-b0) / float64(u)
		if all := shares.total(); profiled && all > 0 {
			share := func(c int) time.Duration {
				return time.Duration(float64(res.CPUPerEvent) * float64(c) / float64(all))
			}
			res.OwnMeasured, res.ProfileSamples = true, all
			res.ProfSourceCPUPerEvent, res.ProfGCCPUPerEvent, res.OwnCPUPerEvent = share(shares.Source), share(shares.GC), share(shares.Own)
		}
	}
	// The source's own cost per update, measured alone with the informer
	// idle and its cache full (a GC's cost depends on the live heap): a
	// watch generates each pod as it sends it, in this process.
	res.SourceCPUPerEvent, res.SourceAllocsPerEvent, res.SourceBytesPerEvent = sourceCost(gen, cfg)
	for k, h := range hs {
		a, up, d := h.Counts()
		res.Calls[k] = [3]int64{a, up, d}
	}
	res.Lists, res.Watches = src.Requests()
	return res, nil
}

// sourceCost is what generating one update's pod costs the process alone:
// CPU, allocations and bytes, over as many updates as the pass streams.
func sourceCost(gen *scalegen.Generator, cfg Config) (time.Duration, float64, float64) {
	if cfg.Updates == 0 {
		return 0, 0, 0
	}
	runtime.GC()
	cpu0 := cputime.Process()
	_, _, a0, b0 := scalegen.ReadHeap()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // on another goroutine, as a watch generates them
		defer wg.Done()
		for k := range cfg.Updates {
			p := gen.Pod(k%cfg.Pods, 1+k/cfg.Pods, strconv.Itoa(cfg.Pods+k+1))
			runtime.KeepAlive(p)
		}
	}()
	wg.Wait()
	cpu := cputime.Process() - cpu0
	_, _, a1, b1 := scalegen.ReadHeap()
	u := float64(cfg.Updates)
	return cpu / time.Duration(cfg.Updates), float64(a1-a0) / u, float64(b1-b0) / u
}

// sourceListTime is how long src alone takes to hand out its whole state
// the way the informer's first request asks for it (Result.SourceList).
func sourceListTime(ctx context.Context, src *scalegen.Source) (time.Duration, error) {
	start := time.Now()
	if src.IsWatchListSemanticsUnSupported() {
		opts := metav1.ListOptions{ResourceVersion: "0", Limit: 500}
		for {
			obj, err := src.ListWithContext(ctx, opts)
			if err != nil {
				return 0, err
			}
			list := obj.(*corev1.PodList)
			if list.Continue == "" {
				return time.Since(start), nil
			}
			opts = metav1.ListOptions{Limit: 500, Continue: list.Continue}
		}
	}
	w, err := src.WatchWithContext(ctx, metav1.ListOptions{SendInitialEvents: new(true), AllowWatchBookmarks: true})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Bookmark {
			return time.Since(start), nil
		}
	}
	return 0, fmt.Errorf("the stream ended before its initial-events-end bookmark")
}

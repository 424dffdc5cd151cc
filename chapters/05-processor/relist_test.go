package processor

// A relist (a 410 on the watch, then the stream or a paged LIST again)
// against client-go's informer on the same source: the same handler calls
// with the same contents, the same cache, the transformer called as often;
// and what ours does differently and on purpose (issue 36): an object that
// did not change (same UID and resourceVersion) is handed back as the
// cached object, so its relist OnUpdate gets one pointer as old and new,
// and the relist holds no second copy of the cache. Faults in the middle
// of a relist leave the cache and the handlers as they were.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// relistCall is one handler call: kind "add", "update" or "delete", and
// the objects given (a delete's is the object or the tombstone).
type relistCall struct {
	kind     string
	old, obj any
	initial  bool
}

// key names the object of a call.
func (c relistCall) key() string {
	o := c.obj
	if t, ok := o.(kcache.DeletedFinalStateUnknown); ok {
		return t.Key
	}
	if t, ok := o.(deltafifo.DeletedFinalStateUnknown); ok {
		return t.Key
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return fmt.Sprintf("%T", o)
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// callLog records a handler's calls.
type callLog struct {
	mu     sync.Mutex
	calls  []relistCall
	called chan struct{} // closed at the next call; see next
}

func (l *callLog) record(c relistCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
	if l.called != nil {
		close(l.called)
		l.called = nil
	}
}

// next returns a channel closed at the handler's next call.
func (l *callLog) next() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.called = make(chan struct{})
	return l.called
}

func (l *callLog) OnAdd(obj any, initial bool) {
	l.record(relistCall{kind: "add", obj: obj, initial: initial})
}
func (l *callLog) OnUpdate(old, obj any) { l.record(relistCall{kind: "update", old: old, obj: obj}) }
func (l *callLog) OnDelete(obj any)      { l.record(relistCall{kind: "delete", obj: obj}) }

func (l *callLog) since(n int) []relistCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls[n:])
}

func (l *callLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// relistSide is one informer, ours or client-go's, with its handlers.
type relistSide struct {
	name      string
	src       *relistSource
	logs      []*callLog
	list      func() []any
	hasSynced func() bool
	lastRV    func() string
}

// tombstoneObj unwraps either library's tombstone.
func tombstoneObj(o any) (any, bool) {
	if t, ok := o.(kcache.DeletedFinalStateUnknown); ok {
		return t.Obj, true
	}
	if t, ok := o.(deltafifo.DeletedFinalStateUnknown); ok {
		return t.Obj, true
	}
	return nil, false
}

func startOursOn(t *testing.T, src *relistSource, queue QueueKind, transform deltafifo.TransformFunc, handlers int) *relistSide {
	inf := NewSharedIndexInformerWithOptions(src, &corev1.Pod{}, SharedIndexInformerOptions{Queue: queue})
	if transform != nil {
		require.NoError(t, inf.SetTransform(transform))
	}
	s := &relistSide{name: "ours " + queue.String(), src: src, list: inf.GetStore().List, hasSynced: inf.HasSynced, lastRV: inf.LastSyncResourceVersion}
	for range handlers {
		l := &callLog{}
		_, err := inf.AddEventHandler(l)
		require.NoError(t, err)
		s.logs = append(s.logs, l)
	}
	run(t, inf.RunWithContext)
	return s
}

func startTheirsOn(t *testing.T, src *relistSource, transform kcache.TransformFunc, handlers int) *relistSide {
	inf := kcache.NewSharedIndexInformer(src, &corev1.Pod{}, 0, kcache.Indexers{})
	if transform != nil {
		require.NoError(t, inf.SetTransform(transform))
	}
	s := &relistSide{name: "client-go", src: src, list: inf.GetStore().List, hasSynced: inf.HasSynced, lastRV: inf.LastSyncResourceVersion}
	for range handlers {
		l := &callLog{}
		_, err := inf.AddEventHandler(l)
		require.NoError(t, err)
		s.logs = append(s.logs, l)
	}
	run(t, inf.RunWithContext)
	return s
}

func run(t *testing.T, f func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// waitUntil polls cond. The tests run in synctest bubbles, so the
// reflectors' backoffs before a relist pass at once, and so does this
// deadline, which only guards against a hang.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Hour)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// cacheKeys is the set of keys s's cache holds.
func (s *relistSide) cacheKeys() map[string]bool {
	out := map[string]bool{}
	for _, o := range s.list() {
		m, _ := meta.Accessor(o)
		out[m.GetNamespace()+"/"+m.GetName()] = true
	}
	return out
}

// cacheByKey is s's cache by key.
func (s *relistSide) cacheByKey() map[string]any {
	out := map[string]any{}
	for _, o := range s.list() {
		m, _ := meta.Accessor(o)
		out[m.GetNamespace()+"/"+m.GetName()] = o
	}
	return out
}

// settle waits until s has synced at its source's resourceVersion and every
// handler has had want calls in all.
func (s *relistSide) settle(t *testing.T, want int) {
	t.Helper()
	rv := s.src.resourceVersion()
	waitUntil(t, s.name+" synced at resourceVersion "+rv, func() bool { return s.hasSynced() && s.lastRV() == rv })
	for i, l := range s.logs {
		waitUntil(t, fmt.Sprintf("%s handler %d has %d calls", s.name, i, want), func() bool { return l.len() >= want })
		require.Equal(t, want, l.len(), "%s handler %d: calls", s.name, i)
	}
}

// relistCalls is how many handler calls a relist from cached to the
// source's current state makes: one per listed object, one per cached key
// not listed.
func relistCalls(cached map[string]bool, src *relistSource) int {
	src.mu.Lock()
	defer src.mu.Unlock()
	listed := map[string]bool{}
	for _, p := range src.alive() {
		listed["default/"+p.name] = true
	}
	n := len(listed)
	for k := range cached {
		if !listed[k] {
			n++
		}
	}
	return n
}

// sortedRuns sorts each run of consecutive deletes by key: client-go
// emits a relist's tombstones in its cache's map order, ours by key.
// unordered sorts all the calls by kind and key instead: client-go hands a
// streamed state over in its temporary store's map order (ours in the
// server's order, see chapter 3), and a DeltaFIFO's relist reaches
// handlers in another order than client-go's RealFIFO, by design (see
// chapter 4).
func sortedRuns(calls []relistCall, unordered bool) []relistCall {
	calls = slices.Clone(calls)
	byKey := func(a, b relistCall) int { return strings.Compare(a.kind+" "+a.key(), b.kind+" "+b.key()) }
	if unordered {
		slices.SortStableFunc(calls, byKey)
		return calls
	}
	for i := 0; i < len(calls); {
		j := i
		for j < len(calls) && calls[j].kind == "delete" {
			j++
		}
		slices.SortStableFunc(calls[i:j], byKey)
		if j == i {
			j++
		}
		i = j
	}
	return calls
}

// requireSameCalls requires ours' calls to equal theirs' one by one:
// kind, key, isInInitialList, and old and new by content. It returns how
// many of ours' updates had one pointer as old and new.
func requireSameCalls(t *testing.T, step string, theirs, ours []relistCall, unordered bool) (samePointer int) {
	t.Helper()
	theirs, ours = sortedRuns(theirs, unordered), sortedRuns(ours, unordered)
	require.Equal(t, len(theirs), len(ours), "%s: number of calls", step)
	for i := range theirs {
		w, g := theirs[i], ours[i]
		require.Equal(t, w.kind+" "+w.key(), g.kind+" "+g.key(), "%s: call %d", step, i)
		require.Equal(t, w.initial, g.initial, "%s: call %d (%s %s): isInInitialList", step, i, w.kind, w.key())
		wo, wt := tombstoneObj(w.obj)
		gobj, gt := tombstoneObj(g.obj)
		require.Equal(t, wt, gt, "%s: call %d (%s %s): tombstone or not", step, i, w.kind, w.key())
		if !wt {
			wo, gobj = w.obj, g.obj
		}
		require.True(t, equality.Semantic.DeepEqual(wo, gobj), "%s: call %d (%s %s): object differs from client-go's:\n%v\n%v", step, i, w.kind, w.key(), wo, gobj)
		require.True(t, equality.Semantic.DeepEqual(w.old, g.old), "%s: call %d (%s %s): old object differs from client-go's", step, i, w.kind, w.key())
		if g.kind == "update" && g.old == g.obj {
			samePointer++
		}
	}
	return samePointer
}

// requireSameCache requires the two caches to hold equal objects.
func requireSameCache(t *testing.T, step string, theirs, ours *relistSide) {
	t.Helper()
	w, g := theirs.cacheByKey(), ours.cacheByKey()
	require.Equal(t, len(w), len(g), "%s: cache size", step)
	for k, o := range w {
		require.True(t, equality.Semantic.DeepEqual(o, g[k]), "%s: cached %s differs from client-go's", step, k)
	}
}

// unchangedWithUID counts the pods that stay in the source with the same
// UID (not empty) and resourceVersion across mutate: the ones a relist
// hands back as the cached object.
func unchangedWithUID(before, after []podSlot) int {
	was := map[string]podSlot{}
	for _, p := range before {
		if p.alive {
			was[p.name] = p
		}
	}
	n := 0
	for _, p := range after {
		if q, ok := was[p.name]; ok && p.alive && p.uid != "" && p.uid == q.uid && p.rv == q.rv {
			n++
		}
	}
	return n
}

// mutate changes src as step dictates; both sides' sources get the same.
func mutate(src *relistSource, rng *rand.Rand) {
	n := src.len()
	for i := range n {
		src.mu.Lock()
		alive := src.slots[i].alive
		src.mu.Unlock()
		if !alive {
			continue
		}
		switch r := rng.IntN(100); {
		case r < 10:
			src.change(i)
		case r < 15:
			src.remove(i)
		case r < 18:
			src.recreate(i, fmt.Sprintf("uid-%d-again-%d", i, rng.IntN(1000)))
		case r < 20:
			src.recreate(i, "") // no UID: never handed back as cached
		}
	}
	for i := range 1 + rng.IntN(n/20+1) {
		uid := fmt.Sprintf("uid-new-%d-%d", n, i)
		if i%5 == 4 {
			uid = ""
		}
		src.create(uid)
	}
}

// countingTransform strips managedFields on a copy and counts its calls
// per pod name.
type countingTransform struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingTransform) transform(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	p = p.DeepCopy()
	p.ManagedFields = nil
	c.mu.Lock()
	c.calls[p.Name]++
	c.mu.Unlock()
	return p, nil
}

func (c *countingTransform) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

func TestRelistHandlerCallsMatchClientGo(t *testing.T) {
	const n, rounds, handlers = 200, 3, 2
	for _, path := range []string{"stream", "paged LIST"} {
		for _, queue := range []QueueKind{RealFIFOQueue, DeltaFIFOQueue} {
			for _, withTransform := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/transform=%v", path, queue, withTransform)
				t.Run(name, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						listOnly := path == "paged LIST"
						oursSrc, theirsSrc := newRelistSource(n, listOnly), newRelistSource(n, listOnly)
						var oursT, theirsT *countingTransform
						var oursTF deltafifo.TransformFunc
						var theirsTF kcache.TransformFunc
						if withTransform {
							oursT, theirsT = &countingTransform{calls: map[string]int{}}, &countingTransform{calls: map[string]int{}}
							oursTF, theirsTF = oursT.transform, theirsT.transform
						}
						unordered := queue == DeltaFIFOQueue || !listOnly
						ours := startOursOn(t, oursSrc, queue, oursTF, handlers)
						theirs := startTheirsOn(t, theirsSrc, theirsTF, handlers)
						theirs.settle(t, n)
						ours.settle(t, n)
						for h := range handlers {
							requireSameCalls(t, "initial list", theirs.logs[h].since(0), ours.logs[h].since(0), unordered)
						}
						requireSameCache(t, "initial list", theirs, ours)

						rng1, rng2 := rand.New(rand.NewPCG(36, 1)), rand.New(rand.NewPCG(36, 1))
						for round := range rounds {
							step := fmt.Sprintf("relist %d", round+1)
							before := slices.Clone(oursSrc.slots)
							mutate(oursSrc, rng1)
							mutate(theirsSrc, rng2)
							want := unchangedWithUID(before, oursSrc.slots)
							require.Positive(t, want, "the script leaves objects unchanged")

							oursMark, theirsMark := ours.logs[0].len(), theirs.logs[0].len()
							oursCalls := oursMark + relistCalls(ours.cacheKeys(), oursSrc)
							theirsCalls := theirsMark + relistCalls(theirs.cacheKeys(), theirsSrc)
							oursSrc.expire()
							theirsSrc.expire()
							theirs.settle(t, theirsCalls)
							ours.settle(t, oursCalls)
							for h := range handlers {
								same := requireSameCalls(t, step, theirs.logs[h].since(theirsMark), ours.logs[h].since(oursMark), unordered)
								// The difference, on purpose: every unchanged
								// object comes back as the cached one.
								require.Equal(t, want, same, "%s: handler %d: updates whose old and new are one pointer (the unchanged objects with a UID)", step, h)
								require.Zero(t, requireSameCalls(t, step, theirs.logs[h].since(theirsMark), theirs.logs[h].since(theirsMark), false),
									"client-go gives a relisted object a copy of its own")
							}
							requireSameCache(t, step, theirs, ours)
							if withTransform {
								require.Equal(t, theirsT.snapshot(), oursT.snapshot(), "%s: transformer calls per pod", step)
							}
						}
					})
				})
			}
		}
	}
}

// TestRelistKeepsTheCacheUntilTheWholeStateArrived fails the relist in the
// middle, on each path: page 3 of a paged LIST fails, or the stream closes
// halfway before its bookmark. Until the retry has brought a whole state,
// the cache and the handlers must be exactly as before the 410; then the
// relist must end as client-go's does on the same faults.
func TestRelistKeepsTheCacheUntilTheWholeStateArrived(t *testing.T) {
	const n, handlers = 300, 2 // four LIST pages of 75
	for _, path := range []string{"stream", "paged LIST"} {
		t.Run(path, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				listOnly := path == "paged LIST"
				srcs := []*relistSource{newRelistSource(n, listOnly), newRelistSource(n, listOnly)}
				for _, s := range srcs {
					s.pageCap = 75
				}
				theirs := startTheirsOn(t, srcs[0], nil, handlers)
				ours := startOursOn(t, srcs[1], RealFIFOQueue, nil, handlers)
				sides := []*relistSide{theirs, ours}
				for _, s := range sides {
					s.settle(t, n)
				}
				for _, s := range sides {
					s.src.change(1)
					s.src.remove(2)
					s.src.create("uid-late")
				}

				type snapshot struct {
					cache map[string]any
					calls []int
				}
				marks := make([]int, len(sides))
				for i, s := range sides {
					before := snapshot{cache: s.cacheByKey()}
					for _, l := range s.logs {
						before.calls = append(before.calls, l.len())
					}
					marks[i] = s.logs[0].len()
					want := marks[i] + relistCalls(s.cacheKeys(), s.src)

					// The fault, then the retry held at its start while the
					// test looks at the informer.
					retried, release := make(chan struct{}), make(chan struct{})
					var once sync.Once
					if listOnly {
						s.src.failPage = 3
						lists := s.src.listsServed()
						s.src.beforePage = func(page int, _ bool) {
							// The relist is LIST lists+1 (fails at page 3);
							// the retry is lists+2.
							if page == 1 && s.src.listsServed() == lists+2 {
								once.Do(func() { close(retried); <-release })
							}
						}
					} else {
						streams := 0
						s.src.midStream = func(k int) (bool, []watch.Event) {
							if k == 1 {
								streams++
								if streams == 2 {
									once.Do(func() { close(retried); <-release })
								}
							}
							return streams == 1 && k == n/2, nil
						}
					}
					// The retry starts, or, if the relist let a part of a
					// list through, a handler is called first. (Blocking,
					// not polling: in a bubble, client-go's reflector may
					// sleep for years of the bubble's time in apimachinery's
					// error handler, whose last error was in real time.)
					called := s.logs[0].next()
					s.src.expire()
					select {
					case <-retried:
					case <-called:
					}
					after := s.cacheByKey()
					require.Equal(t, len(before.cache), len(after), "%s: cache size while the retry runs", s.name)
					for k, o := range before.cache {
						require.Same(t, o, after[k], "%s: cached %s changed before a whole state arrived", s.name, k)
					}
					for h, l := range s.logs {
						require.Equal(t, before.calls[h], l.len(), "%s: handler %d was called before a whole state arrived", s.name, h)
					}
					close(release)
					s.settle(t, want)
				}
				for h := range handlers {
					requireSameCalls(t, "after the faulty relist", theirs.logs[h].since(marks[0]), ours.logs[h].since(marks[1]), !listOnly)
				}
				requireSameCache(t, "after the faulty relist", theirs, ours)
				require.Equal(t, srcs[0].requests(), srcs[1].requests(), "the requests made, the retry's included")
			})
		})
	}
}

// TestRelistDeliversAnObjectChangedWhileItStreams changes an object after
// the stream has sent it (and ours has handed it back as the cached one)
// and before the bookmark: the newest state must win, as in client-go.
func TestRelistDeliversAnObjectChangedWhileItStreams(t *testing.T) {
	synctest.Test(t, testRelistDeliversAnObjectChangedWhileItStreams)
}

func testRelistDeliversAnObjectChangedWhileItStreams(t *testing.T) {
	const n, handlers = 200, 2
	srcs := []*relistSource{newRelistSource(n, false), newRelistSource(n, false)}
	theirs := startTheirsOn(t, srcs[0], nil, handlers)
	ours := startOursOn(t, srcs[1], RealFIFOQueue, nil, handlers)
	sides := []*relistSide{theirs, ours}
	for _, s := range sides {
		s.settle(t, n)
	}
	marks := make([]int, len(sides))
	for i, s := range sides {
		marks[i] = s.logs[0].len()
		src := s.src
		want := marks[i] + relistCalls(s.cacheKeys(), src)
		src.midStream = func(k int) (bool, []watch.Event) {
			if k != 10 {
				return false, nil
			}
			// p000003 was sent unchanged; now it changes.
			return false, []watch.Event{{Type: watch.Modified, Object: src.change(3)}}
		}
		src.expire()
		s.settle(t, want)
		got := s.cacheByKey()["default/p000003"].(*corev1.Pod)
		require.Equal(t, src.resourceVersion(), got.ResourceVersion, "%s: cached p000003 is the newest", s.name)
		require.Equal(t, "1", got.Labels["variant"], "%s: cached p000003 has the newest content", s.name)
	}
	for h := range handlers {
		requireSameCalls(t, "a change while the relist streams", theirs.logs[h].since(marks[0]), ours.logs[h].since(marks[1]), true)
	}
	requireSameCache(t, "a change while the relist streams", theirs, ours)
}

package deltafifo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/spancheck"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// handlerLog records handler calls as text, the same way for client-go's
// ResourceEventHandler and for our InformerProcessFunc, so the two logs can
// be compared line by line. A handler can be made to block on its next call
// (hold), so that the test can queue many events behind it and the queue
// hands them out as a batch once released.
type handlerLog struct {
	mu    sync.Mutex
	lines []string
	held  chan struct{} // non-nil: the next call blocks until it is closed
}

func describePod(obj any) string {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.Namespace + "/" + o.Name + "@" + o.ResourceVersion
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T", obj)
}

func describeTombstone(key string, obj any) string {
	return "tombstone " + key + " of " + describePod(obj)
}

func (h *handlerLog) record(line string) {
	h.mu.Lock()
	held := h.held
	h.held = nil
	h.lines = append(h.lines, line)
	h.mu.Unlock()
	if held != nil {
		<-held
	}
}

func (h *handlerLog) hold() (release func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	h.held = ch
	h.mu.Unlock()
	return func() { close(ch) }
}

func (h *handlerLog) snapshot() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.lines)
}

// client-go's side: a ResourceEventHandler.
func (h *handlerLog) OnAdd(obj any, initial bool) {
	h.record(fmt.Sprintf("add %s initial=%v", describePod(obj), initial))
}

func (h *handlerLog) OnUpdate(old, obj any) {
	if old == obj {
		// SyncAll hands over the cached object as both: a resync.
		h.record("resync " + describePod(obj))
		return
	}
	h.record(fmt.Sprintf("update %s -> %s", describePod(old), describePod(obj)))
}

func (h *handlerLog) OnDelete(obj any) {
	if t, ok := obj.(kcache.DeletedFinalStateUnknown); ok {
		h.record("delete " + describeTombstone(t.Key, t.Obj))
		return
	}
	h.record("delete " + describePod(obj))
}

// our side: an InformerProcessFunc, mapped to handler calls the way
// InformerProcessFunc's doc says (and upstream's processDeltas does).
func (h *handlerLog) process(_ context.Context, d Delta, old any, initial bool) {
	switch {
	case d.Type == Deleted:
		if t, ok := d.Object.(DeletedFinalStateUnknown); ok {
			h.record("delete " + describeTombstone(t.Key, t.Obj))
			return
		}
		h.record("delete " + describePod(d.Object))
	case old == nil:
		h.OnAdd(d.Object, initial)
	default:
		h.OnUpdate(old, d.Object)
	}
}

// normalized sorts, within each run of consecutive tombstone deletes and
// each run of consecutive resyncs, the lines of the run: client-go emits
// both in its cache's map order (reconcileReplacement over ListKeys, the
// SyncAll case over List), so only the set of a run is comparable. Ours
// emits them in key order, so for ours this changes nothing.
func normalized(lines []string) []string {
	out := slices.Clone(lines)
	class := func(l string) string {
		switch {
		case strings.HasPrefix(l, "delete tombstone "):
			return "tombstone"
		case strings.HasPrefix(l, "resync "):
			return "resync"
		}
		return ""
	}
	for i := 0; i < len(out); {
		c := class(out[i])
		j := i + 1
		for j < len(out) && c != "" && class(out[j]) == c {
			j++
		}
		slices.Sort(out[i:j])
		i = j
	}
	return out
}

func cacheContents(objs []any) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = describePod(o)
	}
	slices.Sort(out)
	return out
}

// informerSide is one informer of the comparison.
type informerSide struct {
	name    string
	log     *handlerLog
	list    func() []any
	rv      func() string
	batches func() int // -1: not counted
}

// The embedded server's in-process ListerWatcher for each library: no HTTP,
// so the informers can run in a synctest bubble.
func ourLW(srv *apiserver.Server) *apiserver.ListerWatcher {
	return srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll)
}

// theirLW refuses watch-list (IsWatchListSemanticsUnSupported), so that
// client-go's reflector LISTs. With WatchListClient (on by default since
// 1.35) client-go would stream the list into a temporary store and Replace
// with its List(), i.e. in map order, a different order each run. Ours
// streams (ourLW does not opt out) and hands the list over in the server's
// order, which is the LIST's order: so the two deliver the initial adds
// alike, and what this file compares is the consumer. The two reflectors'
// streams are compared in chapter 3 (watchlist_oracle_test.go).
type theirLW struct{ *apiserver.ListerWatcher }

func (theirLW) IsWatchListSemanticsUnSupported() bool { return true }

func newTheirLW(srv *apiserver.Server) theirLW { return theirLW{ourLW(srv)} }

const processResync = time.Hour

// startSides starts, in the calling bubble, three informers on srv:
// client-go's cache.NewInformerWithOptions (RealFIFO, its v0.37.2 defaults),
// ours from NewInformer(WithRealFIFO()), and ours assembled from the parts
// (RealFIFO, Consumer, Config with ProcessBatch) with its batch calls
// counted, to show the batch path really ran.
func startSides(t *testing.T, srv *apiserver.Server) []*informerSide {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	theirs := &informerSide{name: "client-go", log: &handlerLog{}, batches: func() int { return -1 }}
	theirStore, theirCtrl := kcache.NewInformerWithOptions(kcache.InformerOptions{
		ListerWatcher: newTheirLW(srv), ObjectType: &corev1.Pod{}, Handler: theirs.log, ResyncPeriod: processResync,
	})
	theirs.list, theirs.rv = theirStore.List, theirStore.LastStoreSyncResourceVersion
	wg.Go(func() { theirCtrl.RunWithContext(ctx) })

	viaNewInformer := &informerSide{name: "NewInformer(WithRealFIFO())", log: &handlerLog{}, batches: func() int { return -1 }}
	st, ctrl := NewInformer(ourLW(srv), &corev1.Pod{}, processResync, viaNewInformer.log.process, WithRealFIFO())
	viaNewInformer.list, viaNewInformer.rv = st.List, st.LastStoreSyncResourceVersion
	wg.Go(func() { ctrl.RunWithContext(ctx) })

	parts := &informerSide{name: "RealFIFO+Consumer", log: &handlerLog{}}
	cache := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	consumer := &Consumer{Store: cache, Handler: parts.log.process}
	var mu sync.Mutex
	batches := 0
	partsCtrl := New(&Config{
		Queue:            NewRealFIFOWithOptions(realFIFODefaults("", nil)),
		ListerWatcher:    ourLW(srv),
		ObjectType:       &corev1.Pod{},
		FullResyncPeriod: processResync,
		Process: func(obj any, initial bool) error {
			return consumer.ProcessDeltas(obj.(Deltas), initial)
		},
		ProcessBatch: func(deltas []Delta, initial bool) error {
			mu.Lock()
			batches++
			mu.Unlock()
			return consumer.ProcessDeltasInBatch(deltas, initial)
		},
	})
	parts.list, parts.rv = cache.List, cache.LastStoreSyncResourceVersion
	parts.batches = func() int { mu.Lock(); defer mu.Unlock(); return batches }
	wg.Go(func() { partsCtrl.RunWithContext(ctx) })
	return []*informerSide{theirs, viaNewInformer, parts}
}

// requireSame requires every side's normalized handler log, cache contents
// and cache resourceVersion to equal client-go's (sides[0]).
func requireSame(t *testing.T, step string, sides []*informerSide) {
	t.Helper()
	want := sides[0]
	wantLog := normalized(want.log.snapshot())
	for _, s := range sides[1:] {
		require.Equal(t, wantLog, normalized(s.log.snapshot()), "%s: %s's handler calls differ from client-go's", step, s.name)
		require.Equal(t, cacheContents(want.list()), cacheContents(s.list()), "%s: %s's cache differs", step, s.name)
		require.Equal(t, want.rv(), s.rv(), "%s: %s's cache resourceVersion differs", step, s.name)
	}
}

func podNamed(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func relabel(t *testing.T, srv *apiserver.Server, name, v string) {
	t.Helper()
	obj, err := srv.Get(apiserver.Pods, "ns", name)
	require.NoError(t, err)
	p := obj.(*corev1.Pod).DeepCopy()
	p.Labels = map[string]string{"v": v}
	_, err = srv.Update(p)
	require.NoError(t, err)
}

// TestProcessMatchesClientGoInformer runs client-go's informer and ours (on
// the RealFIFO with its v0.37.2 defaults, built two ways) on one embedded
// API server, in a synctest bubble so that every step ends with all three
// idle, and drives them through a script: initial list; updates, deletes and
// creates; a burst queued behind blocked handlers (batch pops, with one key
// repeated so a batch must split); bookmarks; a relist after a 410 that
// drops, adds and changes objects (atomic ReplacedAll, with tombstones);
// and a resync (atomic SyncAll). After every step each handler log (old,
// new, type, isInInitialList), cache and cache resourceVersion must equal
// client-go's, up to the order inside a run of tombstones or resyncs (see
// normalized).
func TestProcessMatchesClientGoInformer(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	for i := range 6 {
		_, err := srv.Create(podNamed(fmt.Sprintf("p%d", i)))
		require.NoError(t, err)
	}
	synctest.Test(t, func(t *testing.T) {
		sides := startSides(t, srv)
		synctest.Wait()
		requireSame(t, "initial list", sides)
		require.Len(t, sides[0].log.snapshot(), 6)

		relabel(t, srv, "p0", "a")
		require.NoError(t, srv.Delete(apiserver.Pods, "ns", "p1"))
		_, err := srv.Create(podNamed("p6"))
		require.NoError(t, err)
		relabel(t, srv, "p6", "a")
		synctest.Wait()
		requireSame(t, "watch events", sides)

		// A burst behind blocked handlers: each side's next call blocks,
		// the rest queues, and on release the queue hands it out in
		// batches (a repeated key ends a batch).
		var releases []func()
		for _, s := range sides {
			releases = append(releases, s.log.hold())
		}
		relabel(t, srv, "p0", "b")
		for i := 10; i < 40; i++ {
			_, err := srv.Create(podNamed(fmt.Sprintf("p%d", i)))
			require.NoError(t, err)
		}
		relabel(t, srv, "p12", "b")
		require.NoError(t, srv.Delete(apiserver.Pods, "ns", "p13"))
		relabel(t, srv, "p2", "b")
		synctest.Wait()
		for _, r := range releases {
			r()
		}
		synctest.Wait()
		requireSame(t, "burst", sides)
		assert.GreaterOrEqual(t, sides[2].batches(), 2, "the burst must have been handed out in batches, split at the repeated key")

		srv.SendBookmarks()
		synctest.Wait()
		requireSame(t, "bookmark", sides)

		// A relist: every watch is closed and its reconnect held while
		// objects change unseen; history is compacted, so the reconnect
		// gets 410 and each informer relists.
		var stalls []func()
		for range sides {
			stalls = append(stalls, srv.StallNext("watch"))
		}
		srv.CloseWatches()
		synctest.Wait()
		require.NoError(t, srv.Delete(apiserver.Pods, "ns", "p3"))
		require.NoError(t, srv.Delete(apiserver.Pods, "ns", "p11"))
		require.NoError(t, srv.Delete(apiserver.Pods, "ns", "p20"))
		_, err = srv.Create(podNamed("p50"))
		require.NoError(t, err)
		relabel(t, srv, "p4", "c")
		srv.Compact()
		for _, s := range stalls {
			s()
		}
		synctest.Wait()
		time.Sleep(time.Minute) // past the relist backoff
		synctest.Wait()
		requireSame(t, "relist", sides)
		require.Contains(t, sides[0].log.snapshot(), "delete tombstone ns/p3 of ns/p3@"+rvOf(t, sides[0].log.snapshot(), "ns/p3"))

		relabel(t, srv, "p50", "d")
		synctest.Wait()
		requireSame(t, "after relist", sides)

		time.Sleep(processResync)
		synctest.Wait()
		requireSame(t, "resync", sides)
		require.True(t, slices.ContainsFunc(sides[0].log.snapshot(), func(l string) bool { return strings.HasPrefix(l, "resync ") }),
			"the resync step must have resynced")
	})
}

// rvOf finds the last resourceVersion the log shows key at.
func rvOf(t *testing.T, lines []string, key string) string {
	t.Helper()
	rv := ""
	for _, l := range lines {
		for _, f := range strings.Fields(l) {
			if strings.HasPrefix(f, key+"@") {
				rv = strings.TrimPrefix(f, key+"@")
			}
		}
	}
	require.NotEmpty(t, rv, "%s never seen", key)
	return rv
}

// consumerCall is what a Consumer's handler was told, in short.
type consumerCall struct {
	typ     DeltaType
	obj     string
	old     string
	initial bool
}

func recordingConsumer(st store.Store) (*Consumer, *[]consumerCall) {
	var calls []consumerCall
	return &Consumer{Store: st, Handler: func(_ context.Context, d Delta, old any, initial bool) {
		obj := describePod(d.Object)
		if t, ok := d.Object.(DeletedFinalStateUnknown); ok {
			obj = describeTombstone(t.Key, t.Obj)
		}
		calls = append(calls, consumerCall{d.Type, obj, describePod(old), initial})
	}}, &calls
}

// A ReplacedAll writes the cache first, then reports the tombstones (by
// key), then the listed objects in list order, adds and updates as the
// cache had them before.
func TestProcessReplacedAllReplacesFirstThenDeletesThenListOrder(t *testing.T) {
	st := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	for _, p := range []*corev1.Pod{mk("z", "1"), mk("b", "2"), mk("a", "3"), mk("keep", "4")} {
		require.NoError(t, st.Add(p))
	}
	c, calls := recordingConsumer(st)
	var sawCache []string
	inner := c.Handler
	c.Handler = func(ctx context.Context, d Delta, old any, initial bool) {
		if sawCache == nil {
			sawCache = cacheContents(st.List())
		}
		inner(ctx, d, old, initial)
	}
	list := []any{mk("new2", "9"), mk("keep", "8"), mk("new1", "7")}
	require.NoError(t, c.ProcessDeltas(Deltas{{Type: ReplacedAll, Object: ReplacedAllInfo{ResourceVersion: "10", Objects: list}}}, false))

	assert.Equal(t, []string{"ns/keep@8", "ns/new1@7", "ns/new2@9"}, sawCache, "the cache is replaced before the first handler call")
	assert.Equal(t, []consumerCall{
		{Deleted, "tombstone ns/a of ns/a@3", "ns/a@3", false},
		{Deleted, "tombstone ns/b of ns/b@2", "ns/b@2", false},
		{Deleted, "tombstone ns/z of ns/z@1", "ns/z@1", false},
		{Replaced, "ns/new2@9", "nil", false},
		{Replaced, "ns/keep@8", "ns/keep@4", false},
		{Replaced, "ns/new1@7", "nil", false},
	}, *calls)
	assert.Equal(t, "10", st.LastStoreSyncResourceVersion())

	// An unkeyable listed object fails the entry before anything changes.
	err := c.ProcessDeltas(Deltas{{Type: ReplacedAll, Object: ReplacedAllInfo{Objects: []any{mk("x", "1"), 42}}}}, false)
	var keyErr store.KeyError
	require.ErrorAs(t, err, &keyErr)
	assert.Equal(t, []string{"ns/keep@8", "ns/new1@7", "ns/new2@9"}, cacheContents(st.List()))
	assert.Len(t, *calls, 6)
}

func TestProcessSyncAllBookmarkAndBadEntries(t *testing.T) {
	st := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	require.NoError(t, st.Add(mk("b", "2")))
	require.NoError(t, st.Add(mk("a", "1")))
	c, calls := recordingConsumer(st)

	require.NoError(t, c.ProcessDeltas(Deltas{{Type: SyncAll, Object: SyncAllInfo{}}}, false))
	assert.Equal(t, []consumerCall{{Sync, "ns/a@1", "ns/a@1", false}, {Sync, "ns/b@2", "ns/b@2", false}}, *calls,
		"every cached object, in key order, old == new")

	require.NoError(t, c.ProcessDeltas(Deltas{{Type: Bookmark, Object: BookmarkInfo{ResourceVersion: "77"}}}, false))
	assert.Equal(t, "77", st.LastStoreSyncResourceVersion())
	assert.Len(t, *calls, 2, "a bookmark tells no handler")

	for _, d := range []Delta{
		{Type: ReplacedAll, Object: mk("a", "1")},
		{Type: SyncAll, Object: nil},
		{Type: Bookmark, Object: "77"},
		{Type: "Upserted", Object: mk("a", "1")},
	} {
		assert.Error(t, c.ProcessDeltas(Deltas{d}, false), "%s holding %T", d.Type, d.Object)
	}
	assert.Len(t, *calls, 2)
}

// A batch is one Transaction; on a partial failure only the applied writes
// reach the handler, in batch order, and the error carries the
// TransactionError (client-go's processDeltasInBatch does the same).
func TestProcessDeltasInBatchPartialFailure(t *testing.T) {
	st := store.NewStore(store.MetaNamespaceKeyFunc)
	require.NoError(t, st.Add(mk("upd", "1")))
	require.NoError(t, st.Add(mk("del", "2")))
	c, calls := recordingConsumer(st)
	batch := []Delta{
		{Type: Added, Object: mk("new", "3")},
		{Type: Updated, Object: struct{ N int }{1}}, // no metadata: no key
		{Type: Updated, Object: mk("upd", "4")},
		{Type: Deleted, Object: mk("del", "5")},
	}
	err := c.ProcessDeltasInBatch(batch, true)
	var txnErr *store.TransactionError
	require.ErrorAs(t, err, &txnErr)
	assert.Equal(t, []int{0, 2, 3}, txnErr.SuccessfulIndices)
	assert.Equal(t, []consumerCall{
		{Added, "ns/new@3", "nil", true},
		{Updated, "ns/upd@4", "ns/upd@1", true},
		{Deleted, "ns/del@5", "ns/del@2", true},
	}, *calls)
	assert.Equal(t, []string{"ns/new@3", "ns/upd@4"}, cacheContents(st.List()))
	assert.Equal(t, "5", st.LastStoreSyncResourceVersion())

	// A type the RealFIFO never batches: nothing of the batch is applied.
	err = c.ProcessDeltasInBatch([]Delta{{Type: Added, Object: mk("x", "6")}, {Type: SyncAll, Object: SyncAllInfo{}}}, false)
	assert.ErrorContains(t, err, "cannot be processed in a batch")
	assert.Len(t, *calls, 3)
	assert.Equal(t, []string{"ns/new@3", "ns/upd@4"}, cacheContents(st.List()))
}

// plainStore hides the cache's Transaction method: without transactions the
// batch path falls back to one ProcessDeltas per delta and reports every
// failure.
type plainStore struct{ store.Store }

func TestProcessDeltasInBatchWithoutTransactions(t *testing.T) {
	st := plainStore{store.NewStore(store.MetaNamespaceKeyFunc)}
	_, isTxn := any(st).(store.TransactionStore)
	require.False(t, isTxn)
	c, calls := recordingConsumer(st)
	err := c.ProcessDeltasInBatch([]Delta{
		{Type: Added, Object: mk("a", "1")},
		{Type: Added, Object: 42},
		{Type: Added, Object: mk("b", "2")},
	}, false)
	require.Error(t, err)
	assert.ErrorContains(t, err, "1 of 3 deltas")
	assert.Len(t, *calls, 2)
	assert.Equal(t, []string{"ns/a@1", "ns/b@2"}, cacheContents(st.List()))
}

// processLoop uses PopBatch when the queue is a QueueWithBatch and
// ProcessBatch is set, and Pop otherwise.
func TestProcessLoopPopsInBatchesOnlyWithProcessBatch(t *testing.T) {
	for _, withBatch := range []bool{true, false} {
		t.Run(fmt.Sprintf("ProcessBatch=%v", withBatch), func(t *testing.T) {
			q := NewRealFIFOWithOptions(realFIFODefaults("", nil))
			for i := range 5 {
				require.NoError(t, q.Add(mk(fmt.Sprintf("p%d", i), "1")))
			}
			var mu sync.Mutex
			var singles, batched int
			done := make(chan struct{})
			count := func(n int, single bool) {
				mu.Lock()
				defer mu.Unlock()
				if single {
					singles += n
				} else {
					batched += n
				}
				if singles+batched == 5 {
					close(done)
				}
			}
			cfg := &Config{Queue: q, Process: func(obj any, _ bool) error { count(len(obj.(Deltas)), true); return nil }}
			if withBatch {
				cfg.ProcessBatch = func(d []Delta, _ bool) error { count(len(d), false); return nil }
			}
			c := &controller{config: *cfg}
			ctx, cancel := context.WithCancel(context.Background())
			loopDone := make(chan struct{})
			go func() { defer close(loopDone); c.processLoop(ctx) }()
			<-done
			cancel()
			q.Close()
			<-loopDone
			if withBatch {
				assert.Equal(t, 5, batched)
			} else {
				assert.Equal(t, 5, singles)
			}
		})
	}
}

// The consumer's half of the span contract on the RealFIFO: every object of
// an atomic relist (listed or tombstone) and of an atomic resync gets its
// own trace whose root links to the entry's span and has one
// RealFIFO.queued and one HandleDeltas (informer.delta.type = the entry's
// type); deltas of a batch pop carry informer.batch.size; every cache
// write has its Indexer.* span under the HandleDeltas; and the handler is
// given that HandleDeltas span's context.
func TestProcessTracesAtomicEntriesAndBatchesPerObject(t *testing.T) {
	rec, tp := recorder()
	q := NewRealFIFOWithOptions(realFIFODefaults("pods", tp))
	st := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	require.NoError(t, st.Add(mk("gone", "1")))
	require.NoError(t, st.Add(mk("keep", "2")))
	var handlerSpans []trace.SpanID
	c := &Consumer{Store: st, Tracer: tracing.Tracer(tp, tracerName), Name: "pods",
		Handler: func(ctx context.Context, _ Delta, _ any, _ bool) {
			handlerSpans = append(handlerSpans, trace.SpanContextFromContext(ctx).SpanID())
		}}
	single := func(obj any, initial bool) error { return c.ProcessDeltas(obj.(Deltas), initial) }
	queued := func() int {
		q.lock.Lock()
		defer q.lock.Unlock()
		return q.len_locked()
	}
	popAllWith := func() {
		for queued() > 0 {
			require.NoError(t, q.PopBatch(c.ProcessDeltasInBatch, single))
		}
	}

	require.NoError(t, q.Replace([]any{mk("keep", "3"), mk("new", "4")}, "10"))
	popAllWith()
	require.NoError(t, q.Add(mk("a", "5")))
	require.NoError(t, q.Add(mk("b", "6")))
	require.NoError(t, q.Delete(mk("new", "7")))
	popAllWith()
	require.NoError(t, q.Resync())
	popAllWith()
	require.Len(t, handlerSpans, 3+3+3, "relist 3 (one tombstone), batch 3, resync 3")

	var spans []spancheck.Span
	for _, s := range rec.Ended() {
		spans = append(spans, spancheck.FromReadOnly(s))
	}
	ix := spancheck.NewIndex(spans)
	for _, rc := range ix.CheckRoots() {
		require.NoError(t, rc.Err)
		require.False(t, rc.Dropped)
	}
	entrySpans := map[string]trace.SpanID{}
	for _, s := range ix.ByID {
		if s.Name == tracing.SpanRealFIFOReplacedAll || s.Name == tracing.SpanRealFIFOSyncAll {
			entrySpans[s.Name] = s.SpanID
		}
	}
	require.Len(t, entrySpans, 2)

	type seen struct{ event, deltaType, indexer, batch string }
	got := map[string]seen{}
	handled := map[trace.SpanID]bool{}
	for _, s := range ix.ByID {
		if s.Name != tracing.SpanHandleDeltas {
			continue
		}
		handled[s.SpanID] = true
		root := ix.ByID[s.ParentID]
		require.NotNil(t, root, "HandleDeltas is a child of its object's root")
		var indexer []string
		for _, k := range ix.Children[s.SpanID] {
			if strings.HasPrefix(k.Name, "Indexer.") {
				indexer = append(indexer, k.Name)
				assert.False(t, k.Start.Before(s.Start), "%s starts inside its HandleDeltas", k.Name)
			}
		}
		key := root.Attr(tracing.KeyEventType) + " " + s.Attr(tracing.KeyObjectKey)
		got[key] = seen{root.Attr(tracing.KeyEventType), s.Attr(tracing.KeyDeltaType), strings.Join(indexer, ","), s.Attr(tracing.KeyBatchSize)}
		if entry, ok := map[string]string{"ReplacedAll": tracing.SpanRealFIFOReplacedAll, "SyncAll": tracing.SpanRealFIFOSyncAll}[s.Attr(tracing.KeyDeltaType)]; ok {
			require.Len(t, root.Links, 1, key)
			assert.Equal(t, entrySpans[entry], root.Links[0].SpanID(), "%s links to its entry's span", key)
		}
	}
	assert.Equal(t, map[string]seen{
		"TOMBSTONE ns/gone": {"TOMBSTONE", "ReplacedAll", "Indexer.Delete", ""},
		"LISTED ns/keep":    {"LISTED", "ReplacedAll", "Indexer.Update", ""},
		"LISTED ns/new":     {"LISTED", "ReplacedAll", "Indexer.Add", ""},
		"ADDED ns/a":        {"ADDED", "Added", "Indexer.Add", "3"},
		"ADDED ns/b":        {"ADDED", "Added", "Indexer.Add", "3"},
		"DELETED ns/new":    {"DELETED", "Deleted", "Indexer.Delete", "3"},
		"RESYNC ns/a":       {"RESYNC", "SyncAll", "", ""},
		"RESYNC ns/b":       {"RESYNC", "SyncAll", "", ""},
		"RESYNC ns/keep":    {"RESYNC", "SyncAll", "", ""},
	}, got)
	for _, id := range handlerSpans {
		assert.True(t, handled[id], "the handler's context carries its HandleDeltas span")
	}
}

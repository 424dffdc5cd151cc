package dropin

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/bubble"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// The process's registry of live informers and traced queues, which
// [LiveViewHandler] reads. An informer joins when it is built and a traced
// queue when it is wrapped; each leaves when it stops (the informer's Run
// returned, the queue was shut down) or when nothing else holds it any
// more. The registry holds them by weak pointers only: an informer built
// and never run, or a queue dropped without ShutDown, is not kept alive by
// the live view (a process that builds informers per test, or per tenant,
// would otherwise grow without end). Entries whose object is gone or
// stopped are pruned on every join and every read.
//
// Ours: client-go keeps no list of its informers or queues.
var live = registry{informers: map[uint64]liveInformer{}, queues: map[uint64]liveQueue{}}

type registry struct {
	mu sync.Mutex
	// Guarded by mu:
	seq       uint64 // the order of joining, which the page keeps
	informers map[uint64]liveInformer
	queues    map[uint64]liveQueue
}

type liveInformer struct {
	inf      weak.Pointer[Informer]
	probe    *liveprobe.ReflectorProbe // its reflector's requests
	resource string                    // the resource a factory named, or ""
	typ      string                    // the example object's Go type
	// name is its handlers' series' name label (handlerInformerLabels):
	// the reserved Identifier's name, else its description; the plots
	// label it so.
	name string
	// bubble is the testing/synctest bubble the informer was built in (0:
	// none); only a reader in the same bubble lists it. Reading it from
	// elsewhere would be safe (its reads take its own locks only), but
	// its times are on its bubble's clock: a page outside would show a
	// relist of the year 2000, and the plots would mix a test's fake
	// seconds with the process's.
	bubble uint64
}

// liveQueue reads one traced queue without holding it: read answers false
// once the queue is gone or shut down, and reads its counters only when
// asked to (pruning needs no counters).
type liveQueue struct {
	name string
	kind string
	read func(withStats bool) (QueueStats, bool)
	// bubble is the testing/synctest bubble the queue was made in (0:
	// none). Its counters are read only by a reader in the same bubble:
	// controller-runtime's priority queue answers Len by flushing its add
	// buffer, which signals a channel of the bubble, and the runtime ends
	// the process when a goroutine outside does that (internal/bubble).
	bubble uint64
}

// registerInformer adds i; called by newInformer.
func registerInformer(i *Informer, probe *liveprobe.ReflectorProbe, exampleObject runtime.Object, options cache.SharedIndexInformerOptions) {
	e := liveInformer{inf: weak.Make(i), probe: probe, resource: options.Identifier.GroupVersionResource().Resource, typ: fmt.Sprintf("%T", exampleObject),
		name: i.metrics.handlerBase.Name, bubble: bubble.ID()}
	if _, ok := exampleObject.(*metav1.PartialObjectMetadata); ok {
		// Every metadata-only informer has this Go type: its title is its
		// kind, or two informers' boxes read alike.
		e.typ = objectDisplayName(exampleObject, "", "")
	}
	live.mu.Lock()
	live.prune_locked()
	live.seq++
	live.informers[live.seq] = e
	live.mu.Unlock()
	if liveViewOn.Load() {
		timeHandlerCalls(i)
		i.bytes.Start(i.inner) // its cache is empty: nothing to size yet
	}
}

// timeHandlerCalls makes i time its handler calls from now on, for the
// live view's page: chapter 5 pays the clock reads only once something
// reads the times, and its first ReadStats is that. Called outside the
// registry's lock (ReadStats takes the informer's own locks).
func timeHandlerCalls(i *Informer) { _, _ = processor.ReadStats(i.inner) }

// timeAllHandlerCalls is timeHandlerCalls for every live informer, when the
// first LiveViewHandler is made.
func timeAllHandlerCalls() {
	live.mu.Lock()
	var infs []*Informer
	for _, e := range live.informers {
		if i := e.inf.Value(); i != nil {
			infs = append(infs, i)
		}
	}
	live.mu.Unlock()
	for _, i := range infs {
		timeHandlerCalls(i)
		// Sized once, here, and counted from now on (liveprobe.CacheBytes):
		// an informer that has synced 150,000 objects holds its changes
		// back while they are sized, once per process.
		i.bytes.Start(i.inner)
	}
}

// ShowInLiveView adds q, a traced queue made by another package, to the
// live view of the process ([LiveViewHandler]) under name, with kind
// saying what queue it wraps, and returns q. This package's constructors
// (NewTracedQueue, NewTracedDelayingQueue, NewTracedPlainQueue) call it
// themselves; dropin/crqueue's NewTracedPriorityQueue calls it with
// "priority". The queue leaves the view once ShuttingDown answers true,
// or once nothing else holds it: the view holds it by a weak pointer only.
// A queue made inside a testing/synctest bubble is read, and shown, only
// by requests served in that bubble, and one made outside every bubble
// only by requests served outside (docs/07, "Informers and queues made in
// a testing/synctest bubble").
//
// Ours: client-go has no live view.
func ShowInLiveView[Q any, P interface {
	*Q
	Stats() QueueStats
	ShuttingDown() bool
}](q P, name, kind string) P {
	return registered(q, name, kind)
}

// registered adds q to the registry and returns it. The closure reads q
// back from the weak pointer: it must not capture q, or the registry would
// hold it.
func registered[Q any, P interface {
	*Q
	Stats() QueueStats
	ShuttingDown() bool
}](q P, name, kind string) P {
	wp := weak.Make((*Q)(q))
	read := func(withStats bool) (QueueStats, bool) {
		q := P(wp.Value())
		if q == nil || q.ShuttingDown() {
			return QueueStats{}, false
		}
		if !withStats {
			return QueueStats{}, true
		}
		return q.Stats(), true
	}
	b := bubble.ID()
	live.mu.Lock()
	defer live.mu.Unlock()
	live.prune_locked()
	live.seq++
	live.queues[live.seq] = liveQueue{name: name, kind: kind, read: read, bubble: b}
	return q
}

// prune_locked drops the entries whose object is gone or stopped.
func (r *registry) prune_locked() {
	for k, e := range r.informers {
		if i := e.inf.Value(); i == nil || i.IsStopped() {
			delete(r.informers, k)
		}
	}
	for k, q := range r.queues {
		if _, ok := q.read(false); !ok {
			delete(r.queues, k)
		}
	}
}

// liveInformerRef is one live informer, held strongly for one read.
type liveInformerRef struct {
	inf                 *Informer
	probe               *liveprobe.ReflectorProbe
	resource, typ, name string
}

// liveQueueStats is one live queue's name and counters.
type liveQueueStats struct {
	name, kind string
	stats      QueueStats
}

// snapshot lists the live informers and queues in the order they joined,
// those of the caller's testing/synctest bubble only (none: those made
// outside every bubble; see liveQueue.bubble). The informers are returned
// strongly held: the caller reads them outside the registry's lock
// (ReadStats takes the informer's own locks).
func (r *registry) snapshot() ([]liveInformerRef, []liveQueueStats) {
	reader := bubble.ID()
	r.mu.Lock()
	defer r.mu.Unlock()
	var infs []liveInformerRef
	var qs []liveQueueStats
	for _, k := range slices.Sorted(maps.Keys(r.informers)) {
		e := r.informers[k]
		i := e.inf.Value()
		if i == nil || i.IsStopped() {
			delete(r.informers, k)
			continue
		}
		if e.bubble != reader {
			continue
		}
		infs = append(infs, liveInformerRef{inf: i, probe: e.probe, resource: e.resource, typ: e.typ, name: e.name})
	}
	for _, k := range slices.Sorted(maps.Keys(r.queues)) {
		q := r.queues[k]
		if q.bubble != reader {
			// Pruned as prune_locked does (ShuttingDown, which takes a
			// lock or loads a flag, is safe from any goroutine), not
			// read.
			if _, ok := q.read(false); !ok {
				delete(r.queues, k)
			}
			continue
		}
		st, ok := q.read(true)
		if !ok {
			delete(r.queues, k)
			continue
		}
		qs = append(qs, liveQueueStats{name: q.name, kind: q.kind, stats: st})
	}
	return infs, qs
}

// size is how many entries the registry holds, pruned or not (tests).
func (r *registry) size() (informers, queues int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.informers), len(r.queues)
}

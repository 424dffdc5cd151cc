package kit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// Call is one handler call a [Recorder] saw.
type Call struct {
	// Op is "add", "update" or "delete".
	Op string
	// Key is namespace/name of the object (of the new object for updates,
	// of the tombstone's key for a DeletedFinalStateUnknown).
	Key string
	// RV is the object's resourceVersion (the new one for updates, the
	// tombstone's last known state for a tombstone; "" if none).
	RV string
	// Initial is OnAdd's isInInitialList.
	Initial bool
	// Tombstone: OnDelete received a DeletedFinalStateUnknown.
	Tombstone bool
	// At is when the call started.
	At time.Time
}

// String is "add default/a", "update default/a", "delete default/a" or
// "delete default/a (tombstone)".
func (c Call) String() string {
	s := c.Op + " " + c.Key
	if c.Tombstone {
		s += " (tombstone)"
	}
	return s
}

// Recorder is a ResourceEventHandler that records every call. Set Delay
// before use to make every call that slow (a slow handler). In spans its
// listener is called "*kit.Recorder#<i>", i counting the informer's
// handlers from 0 in the order they were added.
type Recorder struct {
	Delay time.Duration

	mu    sync.Mutex
	calls []Call
}

func describe(op string, obj any) Call {
	c := Call{Op: op, At: time.Now()}
	if t, ok := obj.(deltafifo.DeletedFinalStateUnknown); ok {
		c.Tombstone, c.Key = true, t.Key
		obj = t.Obj
	}
	if m, err := meta.Accessor(obj); err == nil && obj != nil {
		c.RV = m.GetResourceVersion()
		if c.Key == "" {
			c.Key = m.GetNamespace() + "/" + m.GetName()
			if m.GetNamespace() == "" {
				c.Key = m.GetName()
			}
		}
	}
	return c
}

func (r *Recorder) record(c Call) {
	if r.Delay > 0 {
		time.Sleep(r.Delay)
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// OnAdd records an "add".
func (r *Recorder) OnAdd(obj any, isInInitialList bool) {
	c := describe("add", obj)
	c.Initial = isInInitialList
	r.record(c)
}

// OnUpdate records an "update" of newObj.
func (r *Recorder) OnUpdate(_, newObj any) { r.record(describe("update", newObj)) }

// OnDelete records a "delete".
func (r *Recorder) OnDelete(obj any) { r.record(describe("delete", obj)) }

// Calls returns a copy of the calls so far, in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Strings returns the calls so far as Call.String values.
func (r *Recorder) Strings() []string {
	var out []string
	for _, c := range r.Calls() {
		out = append(out, c.String())
	}
	return out
}

// Len is the number of calls so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// Reset forgets the calls so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.calls = nil
	r.mu.Unlock()
}

// StopTimeout is how long an [Informer]'s Stop waits for it to stop.
var StopTimeout = 5 * time.Second

// InformerOptions configures [StartInformer].
type InformerOptions struct {
	// Queue: processor.RealFIFOQueue (the zero value, client-go's today)
	// or processor.DeltaFIFOQueue.
	Queue processor.QueueKind
	// Resource to watch; default apiserver.Pods.
	Resource *apiserver.Resource
	// Resync is the informer's default resync period (0: none).
	Resync time.Duration
	// Spans, if set, receives every span of the informer.
	Spans *Spans
	// Name is informer.name in spans; default "pods".
	Name string
	// InProcess talks to the server in process (for synctest bubbles)
	// instead of over HTTP.
	InProcess bool
	// NoWait returns without waiting for the handlers' initial lists.
	NoWait bool
}

// Informer is a running shared informer and its handlers' registrations.
type Informer struct {
	processor.SharedIndexInformer
	Registrations []processor.ResourceEventHandlerRegistration
	// Stop stops the informer and waits up to StopTimeout for its Run to
	// return (it waits for the handler calls under way), failing the test
	// if it does not: a handler that never returns must not hang the
	// checker. It is also called when the test ends.
	Stop func()
}

// StartInformer builds chapter 5's shared informer over srv, adds handlers,
// runs it, and (unless opts.NoWait) waits until every handler has received
// the initial list.
func StartInformer(t testing.TB, srv *apiserver.Server, opts InformerOptions, handlers ...processor.ResourceEventHandler) *Informer {
	t.Helper()
	res := apiserver.Pods
	if opts.Resource != nil {
		res = *opts.Resource
	}
	lw := InProcessListWatch(srv, res)
	if !opts.InProcess {
		lw = ListWatch(t, srv, res)
	}
	name := opts.Name
	if name == "" {
		name = res.GVR.Resource
	}
	o := processor.SharedIndexInformerOptions{ResyncPeriod: opts.Resync, Name: name, Queue: opts.Queue}
	if opts.Spans != nil {
		o.TracerProvider = opts.Spans.Provider()
	}
	inf := processor.NewSharedIndexInformerWithOptions(lw, newObject(res), o)
	out := &Informer{SharedIndexInformer: inf}
	for _, h := range handlers {
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			t.Fatalf("kit: AddEventHandler: %v", err)
		}
		out.Registrations = append(out.Registrations, reg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	var once sync.Once
	out.Stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(StopTimeout):
				t.Errorf("the informer did not stop within %s: a handler call has not returned (an endless loop, or waiting for something that never comes?)", StopTimeout)
			}
		})
	}
	t.Cleanup(out.Stop)
	if !opts.NoWait {
		WaitFor(t, "the informer and its handlers to sync", func() bool {
			if !inf.HasSynced() {
				return false
			}
			for _, r := range out.Registrations {
				if !r.HasSynced() {
					return false
				}
			}
			return true
		})
	}
	return out
}

// newObject returns an empty object of res's kind, the informer's example
// object.
func newObject(res apiserver.Resource) runtime.Object {
	switch res.Kind {
	case "Pod":
		return &corev1.Pod{}
	case "ConfigMap":
		return &corev1.ConfigMap{}
	}
	panic(fmt.Sprintf("kit.StartInformer: no example object for %s; use processor.NewSharedIndexInformer yourself", res.Kind))
}

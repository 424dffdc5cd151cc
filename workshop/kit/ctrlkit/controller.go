package ctrlkit

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

// The controllers of chapter 7's exercises (docs/07-your-controller.md):
// code written against client-go's interfaces, running on package dropin.

// Controller is a small controller: a client-go handler that puts each
// pod's key on a traced workqueue (client-go's rate-limited queue, built by
// dropin.NewTracedRateLimitingQueueWithConfig), and one worker whose reconcile of a key takes
// Delay.
type Controller struct {
	Queue workqueue.TypedRateLimitingInterface[string]
	Delay time.Duration

	mu         sync.Mutex
	reconciles map[string]int // guarded by mu
}

// NewController makes a controller whose queue traces into spans (nil: not
// traced); start its worker with Run.
func NewController(name string, spans *kit.Spans, delay time.Duration) *Controller {
	q := dropin.NewTracedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	if spans != nil {
		q.(*dropin.TracedQueue[string]).SetTracerProvider(spans.Provider())
	}
	return &Controller{Queue: q, Delay: delay, reconciles: map[string]int{}}
}

// Handler is the controller's event handler: every add, update and delete
// enqueues the object's key.
func (c *Controller) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: c.enqueue, UpdateFunc: func(_, o any) { c.enqueue(o) }, DeleteFunc: c.enqueue}
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.Queue.Add(key)
	}
}

// Run starts one worker; the test's end stops it.
func (c *Controller) Run(t testing.TB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			key, shutdown := c.Queue.Get()
			if shutdown {
				return
			}
			time.Sleep(c.Delay)
			c.mu.Lock()
			c.reconciles[key]++
			c.mu.Unlock()
			c.Queue.Forget(key)
			c.Queue.Done(key)
		}
	}()
	t.Cleanup(func() { c.Queue.ShutDown(); <-done })
}

// Reconciles is how many reconciles of key have finished.
func (c *Controller) Reconciles(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciles[key]
}

// Stats are the traced queue's counters.
func (c *Controller) Stats() dropin.QueueStats { return c.Queue.(*dropin.TracedQueue[string]).Stats() }

// StartDropinInformer runs package dropin's informer (ours behind
// client-go's interface) on srv's pods, in process, traced into spans,
// with handlers, and waits until they have the initial state.
func StartDropinInformer(t testing.TB, srv *apiserver.Server, spans *kit.Spans, handlers ...cache.ResourceEventHandler) cache.SharedIndexInformer {
	t.Helper()
	inf := dropin.NewSharedIndexInformer(srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll), &corev1.Pod{}, 0, nil)
	if spans != nil {
		_ = inf.(*dropin.Informer).SetTracerProvider(spans.Provider())
	}
	var regs []cache.ResourceEventHandlerRegistration
	for _, h := range handlers {
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			t.Fatalf("kit: AddEventHandler: %v", err)
		}
		regs = append(regs, reg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(kit.StopTimeout):
			t.Errorf("the informer did not stop within %s: a handler call has not returned", kit.StopTimeout)
		}
	})
	kit.WaitFor(t, "the informer and its handlers to sync", func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return inf.HasSynced()
	})
	return inf
}

// Burst is the scenario of exercises 07-controller/2 and 3: a controller
// (NewController, Delay half a second) on package dropin's informer, one
// pod created, then updated ten times as soon as the worker has begun
// reconciling it. It returns when every update has reached the queue and
// the worker is idle again, with the controller and the pod's key.
func Burst(t testing.TB, spans *kit.Spans) (*Controller, string) {
	t.Helper()
	srv := kit.StartServer(t)
	c := NewController("pods", spans, 500*time.Millisecond)
	StartDropinInformer(t, srv, spans, c.Handler())
	c.Run(t)
	p := kit.CreatePods(t, srv, "web", 1)[0]
	kit.WaitFor(t, "the first reconcile to begin", func() bool { return c.Stats().Processing == 1 })
	for i := range 10 {
		p = p.DeepCopy()
		p.Labels = map[string]string{"v": strconv.Itoa(i)}
		obj, err := srv.Update(p)
		if err != nil {
			t.Fatal(err)
		}
		p = obj.(*corev1.Pod)
	}
	kit.WaitFor(t, "every update at the controller and the worker idle", func() bool {
		st := c.Stats()
		return st.Adds == 11 && st.Depth == 0 && st.Processing == 0
	})
	return c, p.Namespace + "/" + p.Name
}

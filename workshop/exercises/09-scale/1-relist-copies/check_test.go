//go:build workshop

package relistcopies

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

// counter is one informer's handler: it counts calls and keeps no object.
type counter struct {
	adds, updates, same, tombstones atomic.Int64
}

func (c *counter) OnAdd(any, bool) { c.adds.Add(1) }
func (c *counter) OnUpdate(old, new any) {
	c.updates.Add(1)
	if old == new {
		c.same.Add(1)
	}
}
func (c *counter) OnDelete(obj any) {
	switch obj.(type) {
	case kcache.DeletedFinalStateUnknown, deltafifo.DeletedFinalStateUnknown:
		c.tombstones.Add(1)
	}
}
func (c *counter) reset() {
	c.adds.Store(0)
	c.updates.Store(0)
	c.same.Store(0)
	c.tombstones.Store(0)
}

func TestPredictions(t *testing.T) {
	const pods, changed, deleted, created = 1000, 100, 50, 20
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "web", pods)

	ours, theirs := &counter{}, &counter{}
	oursInf := processor.NewSharedIndexInformer(srv.ListerWatcher(apiserver.Pods, metav1.NamespaceDefault), &corev1.Pod{}, 0, nil)
	_ = oursInf.SetWatchErrorHandler(func(*reflector.Reflector, error) {})
	if _, err := oursInf.AddEventHandler(ours); err != nil {
		t.Fatal(err)
	}
	theirInf := kcache.NewSharedIndexInformer(srv.ListerWatcher(apiserver.Pods, metav1.NamespaceDefault), &corev1.Pod{}, 0, kcache.Indexers{})
	_ = theirInf.SetWatchErrorHandler(func(*kcache.Reflector, error) {})
	if _, err := theirInf.AddEventHandler(theirs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go oursInf.RunWithContext(ctx)
	go theirInf.RunWithContext(ctx)
	kit.WaitFor(t, "both informers to sync and hand every pod to their handler", func() bool {
		return oursInf.HasSynced() && theirInf.HasSynced() && ours.adds.Load() == pods && theirs.adds.Load() == pods
	})
	// One change on the open watches first, so that neither ends as a
	// "very short watch" when the server goes down.
	update(t, srv, fmt.Sprintf("web-%d", pods-1), "before")
	kit.WaitFor(t, "the change to reach both handlers", func() bool {
		return ours.updates.Load() == 1 && theirs.updates.Load() == 1
	})
	ours.reset()
	theirs.reset()

	srv.Stop()
	for i := range changed {
		update(t, srv, fmt.Sprintf("web-%d", i), "changed")
	}
	for i := range deleted {
		if err := srv.Delete(apiserver.Pods, metav1.NamespaceDefault, fmt.Sprintf("web-%d", changed+i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range created {
		if _, err := srv.Create(kit.Pod("", fmt.Sprintf("new-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	srv.Compact()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	listed := pods - deleted + created
	kit.WaitFor(t, "the relist to reach both handlers", func() bool {
		for _, c := range []*counter{ours, theirs} {
			if int(c.updates.Load()+c.adds.Load()) != listed || c.tombstones.Load() != deleted {
				return false
			}
		}
		return true
	})
	if ours.updates.Load() != theirs.updates.Load() {
		t.Fatalf("the two informers made different numbers of relist OnUpdate calls: report this to the instructor")
	}

	// At the Replace, the cache still holds its 1,000 pods, and the
	// reflector every listed one: a pod object of its own, unless it is
	// the cached one handed back (which the handler then sees as old ==
	// new).
	held := func(c *counter) int { return pods + listed - int(c.same.Load()) }
	if UpdateCalls != int(ours.updates.Load()) {
		t.Errorf("UpdateCalls: you predicted %d, not the relist's OnUpdate calls per handler. "+
			"The relist's Replace compares the whole listed state with the cache: which pods are an update, which an add, which a delete? (hint 1)", UpdateCalls)
	}
	if SamePointerOurs != int(ours.same.Load()) {
		t.Errorf("SamePointerOurs: you predicted %d, not the relist OnUpdate calls of ours whose old and new are one pointer. "+
			"Which listed pods does our queue's ReuseRelisted hand back as the cached object, and what does it compare? (hint 2)", SamePointerOurs)
	}
	if HeldClientGo != held(theirs) || HeldOurs != held(ours) {
		t.Errorf("HeldClientGo, HeldOurs: you predicted %d and %d; at least one is not the pod objects that informer holds when its Replace is next. "+
			"Both caches still hold their old state then; what does each reflector hold beside it, and which of those objects are the cache's own? (hint 3)", HeldClientGo, HeldOurs)
	}
}

// update sets the pod's label v, as a controller's write would.
func update(t *testing.T, srv *apiserver.Server, name, v string) {
	t.Helper()
	obj, err := srv.Get(apiserver.Pods, metav1.NamespaceDefault, name)
	if err != nil {
		t.Fatal(err)
	}
	p := obj.(*corev1.Pod)
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels["v"] = v
	if _, err := srv.Update(p); err != nil {
		t.Fatal(err)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
)

// lwRequest is one call the reflector made through a recordingLW.
type lwRequest struct {
	verb                 string // list or watch
	resourceVersion      string
	resourceVersionMatch metav1.ResourceVersionMatch
	sendInitialEvents    *bool
	allowWatchBookmarks  bool
	err                  error
	// For a watch: the types of the events it delivered so far, with
	// "BOOKMARK(initial-events-end)" for the bookmark that ends a stream's
	// initial events.
	events []string
}

func (r lwRequest) String() string {
	sie := "unset"
	if r.sendInitialEvents != nil {
		sie = fmt.Sprint(*r.sendInitialEvents)
	}
	return fmt.Sprintf("%s rv=%q rvm=%q sendInitialEvents=%s allowWatchBookmarks=%v err=%v events=%v",
		r.verb, r.resourceVersion, r.resourceVersionMatch, sie, r.allowWatchBookmarks, r.err, r.events)
}

// recordingLW wraps the chapters' ListWatch and records what the reflector
// asked the API server for, and what each watch delivered. It implements
// neither an opt-out of watch-list nor anything else beyond the four calls,
// so a reflector treats it as it treats the ListWatch it wraps.
type recordingLW struct {
	inner *reflector.ListWatch
	mu    sync.Mutex
	reqs  []*lwRequest
}

func (l *recordingLW) record(verb string, o metav1.ListOptions) *lwRequest {
	r := &lwRequest{verb: verb, resourceVersion: o.ResourceVersion, resourceVersionMatch: o.ResourceVersionMatch,
		sendInitialEvents: o.SendInitialEvents, allowWatchBookmarks: o.AllowWatchBookmarks}
	l.mu.Lock()
	l.reqs = append(l.reqs, r)
	l.mu.Unlock()
	return r
}

// requests returns copies of the requests so far.
func (l *recordingLW) requests() []lwRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]lwRequest, len(l.reqs))
	for i, r := range l.reqs {
		out[i] = *r
		out[i].events = append([]string(nil), r.events...)
	}
	return out
}

func (l *recordingLW) List(o metav1.ListOptions) (kruntime.Object, error) {
	return l.ListWithContext(context.Background(), o)
}

func (l *recordingLW) ListWithContext(ctx context.Context, o metav1.ListOptions) (kruntime.Object, error) {
	r := l.record("list", o)
	obj, err := l.inner.ListWithContext(ctx, o)
	l.mu.Lock()
	r.err = err
	l.mu.Unlock()
	return obj, err
}

func (l *recordingLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), o)
}

func (l *recordingLW) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	r := l.record("watch", o)
	w, err := l.inner.WatchWithContext(ctx, o)
	if err != nil {
		l.mu.Lock()
		r.err = err
		l.mu.Unlock()
		return nil, err
	}
	return newRecordingWatch(w, func(ev watch.Event) {
		typ := string(ev.Type)
		if m, err := meta.Accessor(ev.Object); err == nil && ev.Type == watch.Bookmark &&
			m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			typ += "(initial-events-end)"
		}
		l.mu.Lock()
		r.events = append(r.events, typ)
		l.mu.Unlock()
	}), nil
}

// recordingWatch passes a watch's events on, telling seen about each first.
type recordingWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func newRecordingWatch(inner watch.Interface, seen func(watch.Event)) *recordingWatch {
	w := &recordingWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		for ev := range inner.ResultChan() {
			seen(ev)
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

func (w *recordingWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *recordingWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

// An informer with the default options, on the real kube-apiserver, fills
// its cache from a watch-list, as client-go v0.37.2's does: its first
// request is the streaming WATCH (sendInitialEvents=true,
// resourceVersionMatch=NotOlderThan, bookmarks allowed, from
// resourceVersion ""), the server streams every object and then the
// initial-events-end bookmark, and no LIST is made at all.
//
// Both ways kube-apiserver serves a stream: configmaps bypass its watch
// cache on this cluster (hack/local-cluster.sh), so they stream from etcd;
// secrets stream from the watch cache, as most resources of a default
// cluster do. The watch cache needs etcd's RequestWatchProgress (3.4.31+,
// 3.5.13+), hence the etcd hack/etcd builds: on Debian's 3.4.23 the secrets'
// stream ended in a 500 ERROR event and the informer fell back to LIST.
func TestInformerSyncsThroughAStreamFromARealAPIServer(t *testing.T) {
	c := newCluster(t)
	for _, tc := range []struct {
		resource string
		newObj   func(name string) kruntime.Object
		example  kruntime.Object
	}{
		{"configmaps", func(name string) kruntime.Object {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		}, &corev1.ConfigMap{}},
		{"secrets", func(name string) kruntime.Object {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}
		}, &corev1.Secret{}},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			create := func(name string) {
				t.Helper()
				require.NoError(t, c.client.Post().Namespace(c.ns).Resource(tc.resource).Body(tc.newObj(name)).Do(context.Background()).Error())
			}
			const objects = 3
			for i := range objects {
				create(fmt.Sprint("obj", i))
			}
			lw := &recordingLW{inner: reflector.NewListWatchFromClient(c.client, tc.resource, c.ns, fields.Everything())}
			inf := processor.NewSharedIndexInformer(lw, tc.example, 0, store.Indexers{})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); inf.RunWithContext(ctx) }()
			t.Cleanup(func() { cancel(); <-done })

			require.Eventually(t, inf.HasSynced, 60*time.Second, 20*time.Millisecond, "the informer never synced; requests: %v", lw.requests())
			atSync := lw.requests()
			t.Logf("requests before sync: %v", atSync)
			converged(t, c, tc.resource, inf.GetStore(), "synced")

			require.NotEmpty(t, atSync)
			first := atSync[0]
			assert.Equal(t, "watch", first.verb, "the first request is the stream, not a LIST: %v", atSync)
			if assert.NotNil(t, first.sendInitialEvents, "%v", first) {
				assert.True(t, *first.sendInitialEvents, "%v", first)
			}
			assert.Equal(t, metav1.ResourceVersionMatchNotOlderThan, first.resourceVersionMatch, "%v", first)
			assert.True(t, first.allowWatchBookmarks, "%v", first)
			assert.Equal(t, "", first.resourceVersion, "the first stream asks for the latest state: %v", first)
			assert.NoError(t, first.err, "kube-apiserver accepted the stream")
			for _, r := range atSync {
				assert.NotEqual(t, "list", r.verb, "no LIST before the informer synced: %v", atSync)
			}
			// What the server sent on the stream before the informer synced.
			want := []string{}
			for range objects {
				want = append(want, string(watch.Added))
			}
			want = append(want, "BOOKMARK(initial-events-end)")
			require.GreaterOrEqual(t, len(first.events), len(want), "%v", first)
			assert.Equal(t, want, first.events[:len(want)], "every object, then the bookmark that ends the initial events")

			// The same watch carries what changes next.
			create("after-sync")
			converged(t, c, tc.resource, inf.GetStore(), "a change after sync")
			assert.Contains(t, lw.requests()[0].events[len(want):], string(watch.Added), "the stream went on as the informer's watch")
			for _, r := range lw.requests() {
				assert.NotEqual(t, "list", r.verb, "no LIST at all: %v", lw.requests())
			}
		})
	}
}

// converged waits until the cache holds exactly the namespace's objects of
// resource as the API server has them (namespace/name@resourceVersion).
func converged(t *testing.T, c *cluster, resource string, s store.Store, what string) {
	t.Helper()
	keys := func(objs []kruntime.Object) []string {
		var out []string
		for _, o := range objs {
			if m, err := meta.Accessor(o); err == nil {
				out = append(out, m.GetNamespace()+"/"+m.GetName()+"@"+m.GetResourceVersion())
			} else {
				out = append(out, fmt.Sprintf("%T without metadata", o))
			}
		}
		slices.Sort(out)
		return out
	}
	var (
		mu            sync.Mutex // the condition runs on Eventually's goroutine
		server, cache []string
		listErr       error
	)
	// Not require inside the condition: it runs off the test's goroutine.
	cond := func() bool {
		list, err := c.client.Get().Namespace(c.ns).Resource(resource).Do(context.Background()).Get()
		var items []kruntime.Object
		if err == nil {
			items, err = meta.ExtractList(list)
		}
		var cached []kruntime.Object
		for _, o := range s.List() {
			cached = append(cached, o.(kruntime.Object))
		}
		mu.Lock()
		defer mu.Unlock()
		server, cache, listErr = keys(items), keys(cached), err
		return err == nil && slices.Equal(cache, server)
	}
	ok := assert.Eventually(t, cond, 60*time.Second, 20*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.True(t, ok, "%s: cache %v, server %v, list error %v", what, cache, server, listErr)
}

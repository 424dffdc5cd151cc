package processor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

func newInformer(t *testing.T, resync time.Duration) (*apiserver.Server, SharedIndexInformer) {
	t.Helper()
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	client, err := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	return srv, NewSharedIndexInformer(reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything()),
		&corev1.Pod{}, resync, nil)
}

func runInformer(t *testing.T, inf SharedIndexInformer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func TestLifecycleRules(t *testing.T) {
	_, inf := newInformer(t, 0)
	r := newRecorder()
	reg, err := inf.AddEventHandler(r)
	require.NoError(t, err)
	stop := runInformer(t, inf)
	testutil.Eventually(t, "synced", func() bool { return inf.HasSynced() && reg.HasSynced() })

	assert.Error(t, inf.SetTransform(func(o any) (any, error) { return o, nil }), "SetTransform after start")
	assert.Error(t, inf.SetWatchErrorHandler(func(*reflector.Reflector, error) {}), "SetWatchErrorHandler after start")

	require.NoError(t, inf.RemoveEventHandler(reg))
	require.NoError(t, inf.RemoveEventHandler(reg), "removing twice is not an error")
	<-reg.(*processorListener).runFinished // the handler's goroutines are gone
	assert.Error(t, inf.RemoveEventHandler(nil), "a foreign handle is refused")

	stop()
	assert.True(t, inf.IsStopped())
	_, err = inf.AddEventHandler(newRecorder())
	assert.ErrorContains(t, err, "because it has stopped already")
}

func TestResyncPeriodRules(t *testing.T) {
	_, inf := newInformer(t, 10*time.Second)
	s := inf.(*sharedIndexInformer)
	tiny, err := inf.AddEventHandlerWithResyncPeriod(newRecorder(), 10*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, time.Second, tiny.(*processorListener).resyncPeriod, "raised to the 1s minimum")
	assert.Equal(t, time.Second, s.resyncCheckPeriod, "before Run, a shorter period lowers the check period")

	none, err := inf.AddEventHandlerWithResyncPeriod(newRecorder(), 0)
	require.NoError(t, err)
	assert.Zero(t, none.(*processorListener).resyncPeriod)

	runInformer(t, inf)
	testutil.Eventually(t, "synced", inf.HasSynced)
	late, err := inf.AddEventHandlerWithResyncPeriod(newRecorder(), 500*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, time.Second, late.(*processorListener).resyncPeriod, "after Run, raised to the check period")
	assert.Equal(t, 5*time.Second, determineResyncPeriod(klog.Background(), 5*time.Second, time.Second))
	assert.Zero(t, determineResyncPeriod(klog.Background(), 5*time.Second, 0), "an informer that does not resync honours no period")
}

type panicky struct{ calls atomic.Int32 }

func (p *panicky) OnAdd(obj any, _ bool) {
	if p.calls.Add(1) == 1 {
		panic("handler bug")
	}
}
func (p *panicky) OnUpdate(_, _ any) {}
func (p *panicky) OnDelete(any)      {}

// A handler's panic is handled as upstream: with utilruntime.ReallyCrash
// (the default) it is re-raised and ends the process; with it off, it is
// logged, the handler keeps running, and its next notification waits a
// second. ReallyCrash is a process-wide variable, so each case runs in a
// process of its own (this test binary, run again): flipping it here would
// race with every informer of the other tests still winding down.
func TestHandlerPanicIsHandledAsUpstream(t *testing.T) {
	if mode := os.Getenv("PROCESSOR_PANIC_TEST"); mode != "" {
		if mode == "logged" {
			utilruntime.ReallyCrash = false // this process is the test's alone
		}
		srv, err := apiserver.Start(apiserver.Options{})
		require.NoError(t, err)
		t.Cleanup(srv.Stop)
		_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
		_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}})
		// In fake time: the second's wait after the panic costs nothing,
		// and is exactly upstream's.
		synctest.Test(t, func(t *testing.T) {
			inf := NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, 0, nil)
			h := &panicky{}
			_, err := inf.AddEventHandler(h)
			require.NoError(t, err)
			start := time.Now()
			stop := runInformer(t, inf)
			testutil.Eventually(t, "second add delivered after the panic", func() bool { return h.calls.Load() == 2 })
			assert.GreaterOrEqual(t, time.Since(start), time.Second, "the handler's next notification waits a second after its panic")
			stop()
		})
		return
	}
	for _, mode := range []string{"crash", "logged"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHandlerPanicIsHandledAsUpstream$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "PROCESSOR_PANIC_TEST="+mode)
		out, err := cmd.CombinedOutput()
		if mode == "crash" {
			require.Error(t, err, "the panic must end the process:\n%s", out)
			assert.Contains(t, string(out), "panic: handler bug")
			assert.NotContains(t, string(out), "--- PASS")
			continue
		}
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "handler bug", "the panic is logged")
		assert.Contains(t, string(out), "--- PASS: TestHandlerPanicIsHandledAsUpstream")
	}
}

func TestManyHandlersAddedAndRemovedWhileEventsFlow(t *testing.T) {
	srv, inf := newInformer(t, 0)
	runInformer(t, inf)
	testutil.Eventually(t, "synced", inf.HasSynced)

	stopWrites := make(chan struct{})
	var writes sync.WaitGroup
	writes.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stopWrites:
				return
			default:
			}
			name := fmt.Sprintf("p%d", i%20)
			if _, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}); err != nil {
				_ = srv.Delete(apiserver.Pods, "ns", name)
			}
		}
	})
	var handlers sync.WaitGroup
	for range 8 {
		handlers.Go(func() {
			for range 10 {
				r := newRecorder()
				reg, err := inf.AddEventHandler(r)
				if !assert.NoError(t, err) {
					return
				}
				testutil.Eventually(t, "handler synced", reg.HasSynced)
				assert.NoError(t, inf.RemoveEventHandler(reg))
				<-reg.(*processorListener).runFinished
			}
		})
	}
	handlers.Wait()
	close(stopWrites)
	writes.Wait()

	// A handler added now must end up with exactly the cache's contents.
	final := newRecorder()
	reg, err := inf.AddEventHandler(final)
	require.NoError(t, err)
	testutil.Eventually(t, "final handler equals the cache", func() bool {
		_, st := final.snapshot()
		return reg.HasSynced() && assert.ObjectsAreEqual(cacheState(inf.GetStore().List()), st)
	})
}

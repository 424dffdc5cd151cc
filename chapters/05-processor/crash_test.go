package processor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// TestSecondRunWarnsAsUpstream: a second Run returns at once and logs
// upstream's warning through ctx's logger, on client-go's informer and ours.
func TestSecondRunWarnsAsUpstream(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	synctest.Test(t, func(t *testing.T) {
		theirs := cache.NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, 0, nil)
		ours := NewSharedIndexInformer(newInProcessLW(srv), &corev1.Pod{}, 0, nil)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		defer func() { cancel(); wg.Wait() }()
		wg.Go(func() { theirs.RunWithContext(ctx) })
		wg.Go(func() { ours.RunWithContext(ctx) })
		synctest.Wait()
		second := func(run func(context.Context)) []string {
			var msgs []string
			for _, l := range testutil.CaptureLogs(t, func(ctx context.Context) { run(ctx) }) {
				msgs = append(msgs, l.Msg)
			}
			return msgs
		}
		want := second(theirs.RunWithContext)
		require.Equal(t, []string{"Warning: the sharedIndexInformer has started, run more than once is not allowed"}, want)
		require.Equal(t, want, second(ours.RunWithContext))
		require.False(t, ours.IsStopped(), "the second Run leaves the first running")
	})
}

// crashOutcome is what one informer did with a panicking index function.
type crashOutcome struct {
	// Recovered is what RunWithContext panicked with ("" if it returned).
	Recovered string
	// PanicHandlerCalls counts utilruntime.PanicHandlers calls.
	PanicHandlerCalls int
	// Adds are the handler's OnAdd calls, by name.
	Adds []string
	// Cached are the cache's keys at the end.
	Cached    []string
	IsStopped bool
}

// runWithPanickingIndex runs one informer (built by build) over pods a,
// bad and, once it has synced or crashed, c: the index function panics on
// "bad", once. It counts the PanicHandlers' calls.
func runWithPanickingIndex(t *testing.T, build func(lw inProcessLW, index func(obj any) ([]string, error)) (inf interface {
	RunWithContext(context.Context)
	IsStopped() bool
}, add func(onAdd func(name string)), keys func() []string)) crashOutcome {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	defer srv.Stop()
	var out crashOutcome
	var mu sync.Mutex
	utilruntime.PanicHandlers = []func(context.Context, any){func(context.Context, any) {
		mu.Lock()
		defer mu.Unlock()
		out.PanicHandlerCalls++
	}}
	for _, n := range []string{"a", "bad"} {
		_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}})
		require.NoError(t, err)
	}
	synctest.Test(t, func(t *testing.T) {
		panicked := false
		inf, add, keys := build(newInProcessLW(srv), func(obj any) ([]string, error) {
			p := obj.(*corev1.Pod)
			if p.Name == "bad" && !panicked {
				panicked = true
				panic("index bug")
			}
			return []string{p.Name}, nil
		})
		add(func(name string) {
			mu.Lock()
			defer mu.Unlock()
			out.Adds = append(out.Adds, name)
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan string)
		go func() {
			recovered := ""
			defer func() {
				if r := recover(); r != nil {
					recovered = fmt.Sprint(r)
				}
				done <- recovered
			}()
			inf.RunWithContext(ctx)
		}()
		synctest.Wait()
		select {
		case out.Recovered = <-done:
		default:
			// Still running: the panic was swallowed. The next write
			// must still arrive (after the second popping waits).
			_, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}})
			require.NoError(t, err)
			testutil.Eventually(t, "c delivered after the panic", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(out.Adds) > 0 && out.Adds[len(out.Adds)-1] == "c"
			})
		}
		out.IsStopped = inf.IsStopped()
		cancel()
		if out.Recovered == "" {
			<-done
		}
		synctest.Wait()
		out.Cached = keys()
		sort.Strings(out.Cached)
	})
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(out.Adds)
	return out
}

// TestProcessPanicIsHandledAsUpstream: an index function that panics in
// the queue's Process is handled as client-go handles it, in both of
// utilruntime's modes: the PanicHandlers are called as often (the wait
// loop's, the controller's and the informer's HandleCrashWithContext),
// RunWithContext re-raises the panic after stopping (ReallyCrash on), or the
// panic is swallowed, the informer keeps running and the next event
// arrives (ReallyCrash off); the handler and the cache end the same.
// ReallyCrash and PanicHandlers are process-wide, so each mode runs in a
// process of its own (this test binary, run again).
func TestProcessPanicIsHandledAsUpstream(t *testing.T) {
	if mode := os.Getenv("PROCESSOR_PROCESS_PANIC_TEST"); mode != "" {
		utilruntime.ReallyCrash = mode == "crash"
		theirs := runWithPanickingIndex(t, func(lw inProcessLW, index func(any) ([]string, error)) (interface {
			RunWithContext(context.Context)
			IsStopped() bool
		}, func(func(string)), func() []string) {
			inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{"name": index})
			return inf, func(onAdd func(string)) {
				_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) { onAdd(obj.(*corev1.Pod).Name) }})
				require.NoError(t, err)
			}, inf.GetStore().ListKeys
		})
		ours := runWithPanickingIndex(t, func(lw inProcessLW, index func(any) ([]string, error)) (interface {
			RunWithContext(context.Context)
			IsStopped() bool
		}, func(func(string)), func() []string) {
			inf := NewSharedIndexInformer(lw, &corev1.Pod{}, 0, store.Indexers{"name": index})
			return inf, func(onAdd func(string)) {
				_, err := inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(obj any) { onAdd(obj.(*corev1.Pod).Name) }})
				require.NoError(t, err)
			}, inf.GetStore().ListKeys
		})
		t.Logf("client-go: %+v", theirs)
		t.Logf("ours:      %+v", ours)
		require.NotZero(t, theirs.PanicHandlerCalls)
		require.Equal(t, theirs, ours)
		return
	}
	for _, mode := range []string{"crash", "logged"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProcessPanicIsHandledAsUpstream$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "PROCESSOR_PROCESS_PANIC_TEST="+mode)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s:\n%s", mode, out)
		require.True(t, strings.Contains(string(out), "--- PASS: TestProcessPanicIsHandledAsUpstream"), "%s:\n%s", mode, out)
		t.Logf("%s:\n%s", mode, out)
	}
}

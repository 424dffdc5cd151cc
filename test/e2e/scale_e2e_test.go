//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
)

// scaleObjects is how many ConfigMaps the scale test creates: enough that a
// relist is the bulk of the process's heap.
const scaleObjects = 10_000

// TestRelistOfTenThousandConfigMapsOnARealAPIServer creates 10,000
// ConfigMaps (1 KiB of data each) on kube-apiserver, then runs client-go's
// informer and ours (dropin), one after the other, each with a counting
// handler: synced, every watch is ended with a 410 Expired (scalegen's
// Expiring: what kube-apiserver sends once a watch's revision is
// compacted), and the informer relists all 10,000 from the server, by the
// watch-list stream the server offers.
//
// It checks that both libraries' handlers hear the same calls (each
// ConfigMap added, then updated once by the relist) and that the live heap
// a GC marks during the relist stays under 1.3× ours' steady heap plus
// 8 MiB (issue 36's bound), and client-go's under 3× plus 16 MiB. Why
// client-go's bound: a relist holds at most the old cache and
// one full new state (the reflector's pages or streamed objects until its
// Replace), 2× steady, and the Replace's deltas keep the old objects
// reachable until they are popped; 3× leaves that margin and fails on a
// third copy, or on a previous list kept alive, at this size about 25 MiB
// more. The 16 MiB are the client's buffers and the test's own, which do
// not grow with the object count.
func TestRelistOfTenThousandConfigMapsOnARealAPIServer(t *testing.T) {
	const selector = scaleSelector
	_, client, ns := namespaceWithConfigMaps(t, "e2e-scale", scaleObjects)

	libs := []struct {
		name string
		new  func(cache.ListerWatcher) cache.SharedIndexInformer
	}{
		{"client-go", func(lw cache.ListerWatcher) cache.SharedIndexInformer {
			return cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		}},
		{"ours", func(lw cache.ListerWatcher) cache.SharedIndexInformer {
			return dropin.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
		}},
	}
	var calls [][3]int64
	for _, lib := range libs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		lw := scalegen.NewExpiring(cache.NewFilteredListWatchFromClient(client.CoreV1().RESTClient(), "configmaps", ns,
			func(o *metav1.ListOptions) {
				o.LabelSelector = selector
				o.FieldSelector = fields.Everything().String()
			}))
		base := scalegen.LiveHeap()
		inf := lib.new(lw)
		h := &scalegen.Counter{}
		_, err := inf.AddEventHandler(h)
		require.NoError(t, err)
		stopped := make(chan struct{})
		go func() { defer close(stopped); inf.RunWithContext(ctx) }()
		wait := func(total int64, what string) {
			select {
			case <-h.Reach(total):
			case <-ctx.Done():
				a, u, d := h.Counts()
				t.Fatalf("%s, %s: the handler had %d adds, %d updates, %d deletes after 5 minutes", lib.name, what, a, u, d)
			}
		}
		wait(scaleObjects, "sync")
		steady := scalegen.LiveHeap()
		steady -= min(steady, base)

		sm := scalegen.StartHeapSampler()
		lw.Expire()
		wait(2*scaleObjects, "relist")
		peak, peakLive := sm.End()
		cancel()
		<-stopped
		a, u, d := h.Counts()
		require.Equal(t, [3]int64{scaleObjects, scaleObjects, 0}, [3]int64{a, u, d}, "%s: adds, updates, deletes", lib.name)
		calls = append(calls, [3]int64{a, u, d})
		lists, watches := lw.RequestsSinceExpire()
		require.Positive(t, lists+watches, "%s: the relist went to the server", lib.name)
		mib := func(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
		t.Logf("%s: steady heap %s; during the relist: live at GCs up to %s, sampled heap up to %s",
			lib.name, mib(steady), mib(peakLive-min(peakLive, base)), mib(peak-min(peak, base)))
		// Ours is held to issue 36's bound: an unchanged ConfigMap is
		// exchanged for the cached one as it arrives, so the relist holds
		// no second copy (measured 1.27× + 0 here: 33.1 MiB against 26);
		// 1.3× plus 8 MiB of buffers that do not grow with the objects,
		// where a second full copy would be 2×.
		bound, what := 3*steady+16<<20, "3× the steady heap (%s) + 16 MiB"
		if lib.name == "ours" {
			bound, what = steady*13/10+8<<20, "1.3× the steady heap (%s) + 8 MiB"
		}
		require.LessOrEqual(t, peakLive-min(peakLive, base), bound,
			"%s: the live heap during the relist (%s) is over "+what, lib.name, mib(peakLive-min(peakLive, base)), mib(steady))
	}
	require.Equal(t, calls[0], calls[1], "client-go's handler calls, then ours")
}

// createConfigMaps creates n labelled ConfigMaps in ns with 16 requests in
// flight.
// scaleSelector selects the ConfigMaps createConfigMaps makes.
const scaleSelector = "scale-e2e=true"

// namespaceWithConfigMaps makes a namespace of its own (named from
// prefix) holding n ConfigMaps of about 1 KiB (createConfigMaps), and a
// client without a client-side rate limit; the ConfigMaps are deleted when
// the test ends. It returns the kubeconfig, the client and the namespace.
func namespaceWithConfigMaps(t *testing.T, prefix string, n int) (string, kubernetes.Interface, string) {
	t.Helper()
	kubeconfig, _, ns := clientsetNamespace(t, prefix)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit: thousands of creates
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	// No namespace controller runs on this cluster: the namespace's
	// deletion would leave the ConfigMaps in etcd, and in the watch cache
	// of every later test.
	t.Cleanup(func() {
		_ = client.CoreV1().ConfigMaps(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: scaleSelector})
	})
	start := time.Now()
	createConfigMaps(t, client, ns, n)
	t.Logf("created %d ConfigMaps in %v", n, time.Since(start).Round(time.Millisecond))
	return kubeconfig, client, ns
}

func createConfigMaps(t *testing.T, client kubernetes.Interface, ns string, n int) {
	t.Helper()
	data := strings.Repeat("key: value # a line of configuration\n", 28) // about 1 KiB
	next := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-%05d", i), Labels: map[string]string{"scale-e2e": "true", "shard": fmt.Sprint(i % 10)}},
					Data:       map[string]string{"config.yaml": data, "index": fmt.Sprint(i)},
				}
				if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- fmt.Errorf("create %s: %w", cm.Name, err):
					default:
					}
					return
				}
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

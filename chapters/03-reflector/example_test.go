package reflector_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
)

// A reflector alone is already a cache that follows the API server: here
// against the embedded API server, over HTTP, as it would against a cluster.
func ExampleNewReflector() {
	srv, _ := apiserver.Start(apiserver.Options{})
	defer srv.Stop()
	for _, name := range []string{"web-1", "web-2"} {
		_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
	}

	client, _ := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
	lw := reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything())
	cache := store.NewStore(store.MetaNamespaceKeyFunc)
	r := reflector.NewReflector(lw, &corev1.Pod{}, cache, 0)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.RunWithContext(ctx)

	waitFor := func(n int) []string {
		for {
			if keys := cache.ListKeys(); len(keys) == n {
				slices.Sort(keys)
				return keys
			}
			time.Sleep(time.Millisecond)
		}
	}
	fmt.Println("listed:", waitFor(2), "at RV", r.LastSyncResourceVersion())

	_ = srv.Delete(apiserver.Pods, "default", "web-1")
	fmt.Println("watched:", waitFor(1))
	// Output:
	// listed: [default/web-1 default/web-2] at RV 3
	// watched: [default/web-2]
}

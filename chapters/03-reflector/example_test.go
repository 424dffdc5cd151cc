package reflector_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	fmt.Println("synced:", waitFor(2), "at RV", r.LastSyncResourceVersion())

	_ = srv.Delete(apiserver.Pods, "default", "web-1")
	fmt.Println("watched:", waitFor(1))
	// Output:
	// synced: [default/web-1 default/web-2] at RV 3
	// watched: [default/web-2]
}

// The two conversations a reflector can have with the API server, read from
// the embedded server's request log: the stream that client-go v0.37.2's
// reflectors start with, and the classic LIST, then WATCH, which a
// reflector falls back to when the server cannot stream, and which
// UseWatchList: false (or KUBE_FEATURE_WatchListClient=false) asks for.
func ExampleReflectorOptions_useWatchList() {
	for _, stream := range []bool{true, false} {
		srv, _ := apiserver.Start(apiserver.Options{})
		_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}})
		client, _ := kube.RESTClientFor(srv.Config(), corev1.SchemeGroupVersion)
		lw := reflector.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything())
		cache := store.NewStore(store.MetaNamespaceKeyFunc)
		opts := reflector.ReflectorOptions{}
		if !stream {
			opts.UseWatchList = new(false)
		}
		r := reflector.NewReflectorWithOptions(lw, &corev1.Pod{}, cache, opts)
		ctx, cancel := context.WithCancel(context.Background())
		go r.RunWithContext(ctx)
		for r.LastSyncResourceVersion() == "" || srv.WatchCount() == 0 {
			time.Sleep(time.Millisecond)
		}
		fmt.Println("streams the initial state:", r.UsesWatchList())
		for _, req := range srv.Requests() {
			q := req.Query
			line := fmt.Sprintf("  %s %s resourceVersion=%q", strings.ToUpper(req.Verb), req.Resource, q.Get("resourceVersion"))
			if q.Get("sendInitialEvents") != "" {
				line += " sendInitialEvents=" + q.Get("sendInitialEvents") + " resourceVersionMatch=" + q.Get("resourceVersionMatch")
			}
			fmt.Println(line)
		}
		cancel()
		srv.Stop()
	}
	// Output:
	// streams the initial state: true
	//   WATCH pods resourceVersion="" sendInitialEvents=true resourceVersionMatch=NotOlderThan
	// streams the initial state: false
	//   LIST pods resourceVersion="0"
	//   WATCH pods resourceVersion="2"
}

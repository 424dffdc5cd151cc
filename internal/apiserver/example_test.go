package apiserver_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// A client-go reflector fed in process: no HTTP between it and the server,
// so it could as well run inside a testing/synctest bubble. Chapter 3's
// reflector takes the same value.
func ExampleServer_ListerWatcher() {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web"}})
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "db"}})

	store := kcache.NewStore(kcache.MetaNamespaceKeyFunc)
	r := kcache.NewReflector(srv.ListerWatcher(apiserver.Pods, "a"), &corev1.Pod{}, store, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.RunWithContext(ctx)
	synced := kcache.WaitForCacheSync(ctx.Done(), func() bool { return r.LastSyncResourceVersion() != "" })
	fmt.Println(synced, store.ListKeys())
	// Output: true [a/web]
}

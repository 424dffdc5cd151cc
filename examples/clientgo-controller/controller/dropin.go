package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// UseDropinInformer makes factory hand out our informer for ConfigMaps in
// namespace ("" for all): InformerFor's first caller decides how an
// informer of a type is built, and every later caller,
// factory.Core().V1().ConfigMaps() included, gets that one. Call it right
// after making the factory, before anything asks for ConfigMaps.
//
// The ListerWatcher is the one client-go's generated informer builds:
// typed List and Watch calls, marked by ToListWatcherWithWatchListSemantics
// so that a client that cannot stream the initial state (the fake
// clientset) is listed instead, by our reflector as by client-go's.
func UseDropinInformer(factory informers.SharedInformerFactory, namespace string) {
	factory.InformerFor(&corev1.ConfigMap{}, func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		configMaps := client.CoreV1().ConfigMaps(namespace)
		lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				return configMaps.List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				return configMaps.Watch(ctx, opts)
			},
		}, client)
		return dropin.NewSharedIndexInformerWithOptions(lw, &corev1.ConfigMap{}, cache.SharedIndexInformerOptions{
			ResyncPeriod: resync,
			Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		})
	})
}

package factory_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// How a controller usually begins: a factory, the informers it needs, Start,
// WaitForCacheSync, then reads from listers.
func ExampleNewSharedInformerFactory() {
	srv, _ := apiserver.Start(apiserver.Options{})
	defer srv.Stop()
	_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}})
	_, _ = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}})

	client, _ := factory.NewForConfig(srv.Config())
	f := factory.NewSharedInformerFactory(client, 0)
	pods := f.Core().V1().Pods().Lister()             // creates the pod informer
	configMaps := f.Core().V1().ConfigMaps().Lister() // and the configmap one

	stop := make(chan struct{})
	f.Start(stop)
	for typ, synced := range f.WaitForCacheSync(stop) {
		if !synced {
			fmt.Println("not synced:", typ)
		}
	}

	all, _ := pods.List(labels.Everything())
	cm, _ := configMaps.ConfigMaps("shop").Get("settings")
	fmt.Println(len(all), all[0].Name, cm.Name)

	close(stop)
	f.Shutdown()
	// Output:
	// 1 web-1 settings
}

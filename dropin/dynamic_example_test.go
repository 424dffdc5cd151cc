package dropin_test

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// The dynamic factory has no InformerFor, so a controller of custom
// resources written in client-go's style (an informers.GenericInformer from
// dynamicinformer's ForResource) takes NewDynamicInformer's instead, with
// the scope the factory would have had, and runs it itself.
func ExampleNewDynamicInformer() {
	gvr := schema.GroupVersionResource{Group: "shop.example.com", Version: "v1", Resource: "widgets"}
	widget := func(ns, name, tier string) runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("shop.example.com/v1")
		u.SetKind("Widget")
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(map[string]string{"tier": tier})
		return u
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "WidgetList"},
		widget("shop", "gold-1", "gold"), widget("shop", "tin-1", "tin"), widget("other", "gold-2", "gold"))

	// Was: dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, "shop", tweak).ForResource(gvr)
	scope := dropin.FactoryScope{Namespace: "shop", TweakListOptions: func(o *metav1.ListOptions) { o.LabelSelector = "tier=gold" }}
	widgets := dropin.NewDynamicInformer(client, gvr, scope, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go widgets.Informer().RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), widgets.Informer().HasSynced) {
		panic("not synced")
	}
	objs, err := widgets.Lister().List(labels.Everything())
	if err != nil {
		panic(err)
	}
	var names []string
	for _, o := range objs {
		u := o.(*unstructured.Unstructured)
		names = append(names, u.GetNamespace()+"/"+u.GetName())
	}
	slices.Sort(names)
	fmt.Println(names)
	_, ours := dropin.InformerOf(widgets.Informer())
	fmt.Println("ours:", ours)
	// Output:
	// [shop/gold-1]
	// ours: true
}

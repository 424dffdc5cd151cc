package store_test

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

func newPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node},
	}
}

// The informer's cache: keyed by namespace/name, indexed by namespace.
func ExampleNewIndexer() {
	cache := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{
		store.NamespaceIndex: store.MetaNamespaceIndexFunc,
	})
	_ = cache.Add(newPod("default", "web-1", "node-a"))
	_ = cache.Add(newPod("default", "web-2", "node-b"))
	_ = cache.Add(newPod("kube-system", "dns", "node-a"))

	keys, _ := cache.IndexKeys(store.NamespaceIndex, "default")
	fmt.Println(keys)

	obj, exists, _ := cache.GetByKey("kube-system/dns")
	fmt.Println(exists, obj.(*corev1.Pod).Spec.NodeName)
	// Output:
	// [default/web-1 default/web-2]
	// true node-a
}

func ExampleMetaNamespaceKeyFunc() {
	k1, _ := store.MetaNamespaceKeyFunc(newPod("default", "web-1", ""))
	k2, _ := store.MetaNamespaceKeyFunc(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}})
	_, err := store.MetaNamespaceKeyFunc("not an object")
	fmt.Println(k1)
	fmt.Println(k2)
	fmt.Println(err)
	// Output:
	// default/web-1
	// node-a
	// object has no meta: object does not implement the Object interfaces
}

func ExampleSplitMetaNamespaceKey() {
	ns, name, _ := store.SplitMetaNamespaceKey("default/web-1")
	fmt.Printf("%q %q\n", ns, name)
	ns, name, _ = store.SplitMetaNamespaceKey("node-a")
	fmt.Printf("%q %q\n", ns, name)
	// Output:
	// "default" "web-1"
	// "" "node-a"
}

// An index added after objects are stored is filled from them at once; a
// second index by the same name is refused.
func ExampleIndexer_AddIndexers() {
	cache := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{})
	_ = cache.Add(newPod("default", "web-1", "node-a"))
	_ = cache.Add(newPod("default", "web-2", "node-a"))

	byNode := func(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Spec.NodeName}, nil }
	fmt.Println(cache.AddIndexers(store.Indexers{"byNode": byNode}))
	onA, _ := cache.ByIndex("byNode", "node-a")
	fmt.Println(len(onA))
	fmt.Println(cache.AddIndexers(store.Indexers{"byNode": byNode}))
	// Output:
	// <nil>
	// 2
	// indexer conflict: map[byNode:{}]
}

// Replace is how a reflector applies a LIST: the store ends up holding exactly
// the listed objects, and objects not listed are gone.
func ExampleStore_Replace() {
	s := store.NewStore(store.MetaNamespaceKeyFunc)
	_ = s.Add(newPod("default", "deleted-while-disconnected", ""))
	_ = s.Replace([]any{newPod("default", "web-1", ""), newPod("default", "web-2", "")}, "42")
	keys := s.ListKeys()
	slices.Sort(keys)
	fmt.Println(keys, s.LastStoreSyncResourceVersion())
	// Output:
	// [default/web-1 default/web-2] 42
}

// A batch of writes under one lock hold, as the RealFIFO's batch consumer
// (chapter 4) applies it. The object with no metadata cannot be keyed: it is
// skipped and reported, the others are applied, and SuccessfulIndices says
// which ones, so the caller runs event handlers for those only.
func ExampleTransactionStore() {
	cache := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{})
	_ = cache.Add(newPod("default", "old", ""))

	err := cache.(store.TransactionStore).Transaction(
		store.Transaction{Object: newPod("default", "web-1", ""), Type: store.TransactionTypeAdd},
		store.Transaction{Object: "not an object", Type: store.TransactionTypeAdd},
		store.Transaction{Object: newPod("default", "old", ""), Type: store.TransactionTypeDelete},
	)
	fmt.Println(err.SuccessfulIndices, err.TotalTransactions)
	fmt.Println(cache.ListKeys())
	// Output:
	// [0 2] 3
	// [default/web-1]
}

// A transformer slims each object on its way into the store: here it drops
// managedFields, the usual memory saving. The key is taken from the object
// as given, before the transformer runs.
func ExampleWithTransformer() {
	slim := func(obj any) (any, error) {
		p := obj.(*corev1.Pod).DeepCopy()
		p.ManagedFields = nil
		return p, nil
	}
	s := store.NewStore(store.MetaNamespaceKeyFunc, store.WithTransformer(slim))
	_ = s.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}})
	obj, _, _ := s.GetByKey("default/web")
	fmt.Println("managedFields kept:", len(obj.(*corev1.Pod).ManagedFields))
	// Output:
	// managedFields kept: 0
}

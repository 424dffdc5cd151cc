package dropin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// Pods decoded as a client decodes them (every string a new allocation)
// hold one copy of the values they repeat once the table has seen them;
// what only one pod has (its name) stays its own.
func ExampleStringTable() {
	table := dropin.NewStringTable(dropin.StringTableOptions{})
	var pods []*corev1.Pod
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		var p corev1.Pod
		doc := `{"metadata":{"name":"` + name + `","namespace":"shop","labels":{"app":"web"}},"spec":{"nodeName":"node-1"}}`
		if err := json.Unmarshal([]byte(doc), &p); err != nil {
			panic(err)
		}
		obj, err := table.Transform(&p)
		if err != nil {
			panic(err)
		}
		pods = append(pods, obj.(*corev1.Pod))
	}
	one := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	fmt.Println("one copy of the namespace:", one(pods[0].Namespace, pods[2].Namespace))
	fmt.Println("one copy of the node's name:", one(pods[1].Spec.NodeName, pods[2].Spec.NodeName))
	fmt.Println("each name its own:", !one(pods[0].Name, pods[1].Name))
	fmt.Println("values kept:", table.Stats().Strings)
	// Output:
	// one copy of the namespace: true
	// one copy of the node's name: true
	// each name its own: true
	// values kept: 4
}

// newPodInformer is a pod informer of ours whose cache keeps no
// managedFields (controller-runtime's TransformStripManagedFields does the
// same) and one copy of the strings its pods repeat.
func newPodInformer(lw cache.ListerWatcher) (cache.SharedIndexInformer, *dropin.StringTable, error) {
	table := dropin.NewStringTable(dropin.StringTableOptions{})
	informer := dropin.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
	})
	err := informer.SetTransform(func(obj any) (any, error) {
		if m, err := apimeta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
			m.SetManagedFields(nil)
		}
		return table.Transform(obj)
	})
	return informer, table, err
}

// A transform of your own and the table's, composed in one TransformFunc.
func ExampleStringTable_Transform() {
	srv, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		if _, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}}}); err != nil {
			panic(err)
		}
	}
	informer, _, err := newPodInformer(srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.RunWithContext(ctx)
	cache.WaitForCacheSync(ctx.Done(), informer.HasSynced)

	var names []string
	stripped := true
	for _, obj := range informer.GetStore().List() {
		p := obj.(*corev1.Pod)
		names = append(names, p.Name)
		stripped = stripped && p.ManagedFields == nil
	}
	slices.Sort(names)
	fmt.Println("cached:", names, "managedFields stripped:", stripped)
	// Output:
	// cached: [web-1 web-2 web-3] managedFields stripped: true
}

// A table's newer generation holds half its MaxBytes: here two values
// (each counted with 64 bytes of overhead). The third starts a new one,
// and the Stats say so.
func ExampleStringTable_Stats() {
	table := dropin.NewStringTable(dropin.StringTableOptions{MaxBytes: 300})
	for _, ns := range []string{"ns-a", "ns-a", "ns-b", "ns-b", "ns-c", "ns-c"} {
		p := &corev1.Pod{}
		p.Namespace = string([]byte(ns)) // a string of its own, as decoded
		if _, err := table.Transform(p); err != nil {
			panic(err)
		}
	}
	st := table.Stats()
	fmt.Println("kept:", st.Strings, "rotations:", st.Rotations)
	// Output:
	// kept: 3 rotations: 1
}

// A nil where an object should be is an error that says so.
func ExampleErrNilObject() {
	table := dropin.NewStringTable(dropin.StringTableOptions{})
	_, err := table.Transform((*corev1.Pod)(nil))
	fmt.Println(errors.Is(err, dropin.ErrNilObject))
	// Output:
	// true
}

//go:build workshop

package owners

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	idx := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc})
	rs := func(ns, name string, sel *metav1.LabelSelector) {
		_ = idx.Add(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.ReplicaSetSpec{Selector: sel}})
	}
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	rs("shop", "web", web)
	rs("shop", "everything", &metav1.LabelSelector{})
	rs("shop", "nothing", nil)
	rs("other", "web-too", web)
	l := lister.NewReplicaSetLister(idx)
	got, err := l.GetPodReplicaSets(kit.Pod("shop", "web-1", kit.WithLabels("app", "web")))
	if err != nil {
		t.Fatalf("GetPodReplicaSets: %v", err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	_, err = l.GetPodReplicaSets(kit.Pod("shop", "db-1", kit.WithLabels("app", "db")))
	// One message for both: a message about ErrorForApp alone would say
	// which yes/no value to flip.
	if !slices.Equal(Owners, names) || (err != nil) != ErrorForApp {
		t.Errorf("your predictions are not what GetPodReplicaSets does: which ReplicaSets select web-1 (mind the empty and the nil selector, and the namespaces), and what does it return for db-1, which no ReplicaSet selects?")
	}
}

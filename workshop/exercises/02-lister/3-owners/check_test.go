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
	owners := func(ns, name string) []string {
		got, err := l.GetPodReplicaSets(kit.Pod(ns, name, kit.WithLabels("app", "web")))
		if err != nil {
			t.Fatalf("GetPodReplicaSets(%s/%s): %v", ns, name, err)
		}
		var names []string
		for _, r := range got {
			names = append(names, r.Name)
		}
		slices.Sort(names)
		return names
	}
	web1, web2 := owners("shop", "web-1"), owners("other", "web-2")
	_, err := l.GetPodReplicaSets(kit.Pod("shop", "db-1", kit.WithLabels("app", "db")))
	// One message for all: a message about ErrorForApp alone would say
	// which yes/no value to flip, and one per prediction let a script
	// that tries the page's names pass in a few runs.
	if !slices.Equal(Owners, web1) || !slices.Equal(OwnersInOther, web2) || (err != nil) != ErrorForApp {
		t.Errorf("your predictions are not what GetPodReplicaSets does: which ReplicaSets select web-1, and which web-2 (mind the empty and the nil selector, and the namespaces), and what does it return for db-1, which no ReplicaSet selects?")
	}
}

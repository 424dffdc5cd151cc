package lister

// Differential test: the same random writes go to a client-go Indexer and to a
// chapter-1 Indexer; then the same list queries go to client-go's listers
// (tools/cache listers.go and the generated listers) and to ours, and the
// answers, including error messages, must be identical.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// oracleOps is the number of random steps per seed without the race
// detector; under it, a tenth (testutil.OracleSteps).
var oracleOps = testutil.OracleSteps(10000)

var (
	namespaces = []string{"", "default", "team-a", "team-b"}
	selectors  = func() []labels.Selector {
		out := []labels.Selector{labels.Everything(), labels.Nothing()}
		for _, s := range []string{"app=web", "app in (web,db)", "!app", "tier", "app!=web,tier=fe", "app notin (db)"} {
			sel, err := labels.Parse(s)
			if err != nil {
				panic(err)
			}
			out = append(out, sel)
		}
		return out
	}()
)

type gen struct {
	r  *rand.Rand
	rv int
}

func (g *gen) labels() map[string]string {
	l := map[string]string{}
	if g.r.IntN(4) > 0 {
		l["app"] = []string{"web", "db", "cache"}[g.r.IntN(3)]
	}
	if g.r.IntN(2) == 0 {
		l["tier"] = []string{"fe", "be"}[g.r.IntN(2)]
	}
	if len(l) == 0 && g.r.IntN(2) == 0 {
		return nil
	}
	return l
}

func (g *gen) meta() metav1.ObjectMeta {
	g.rv++
	return metav1.ObjectMeta{
		Namespace:       namespaces[g.r.IntN(len(namespaces))],
		Name:            "o" + strconv.Itoa(g.r.IntN(30)),
		ResourceVersion: strconv.Itoa(g.rv),
		Labels:          g.labels(),
	}
}

func (g *gen) pod() *corev1.Pod { return &corev1.Pod{ObjectMeta: g.meta()} }

func (g *gen) replicaSet() *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: g.meta()}
	switch g.r.IntN(6) {
	case 0: // nil selector: must match nothing
	case 1:
		rs.Spec.Selector = &metav1.LabelSelector{} // empty: must match nothing
	case 2: // invalid operator: must match nothing, not error
		rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	default:
		rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: g.labels()}
	}
	return rs
}

// pair is one of our indexers and its client-go twin, written identically.
type pair struct {
	ours   store.Indexer
	theirs kcache.Indexer
}

func newPair(withNamespaceIndex bool) pair {
	if withNamespaceIndex {
		return pair{
			store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc}),
			kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{kcache.NamespaceIndex: kcache.MetaNamespaceIndexFunc}),
		}
	}
	return pair{store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{}), kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{})}
}

func (p pair) write(t *testing.T, g *gen, obj func() runtime.Object) {
	t.Helper()
	switch op := g.r.IntN(100); {
	case op < 50:
		o := obj()
		mustBoth(t, p.ours.Add(o), p.theirs.Add(o))
	case op < 75:
		o := obj()
		mustBoth(t, p.ours.Update(o), p.theirs.Update(o))
	case op < 97:
		o := obj()
		mustBoth(t, p.ours.Delete(o), p.theirs.Delete(o))
	default:
		var list []any
		for range g.r.IntN(25) {
			list = append(list, obj())
		}
		mustBoth(t, p.ours.Replace(list, strconv.Itoa(g.rv)), p.theirs.Replace(list, strconv.Itoa(g.rv)))
	}
}

func mustBoth(t *testing.T, a, b error) {
	t.Helper()
	if a != nil || b != nil {
		t.Fatalf("write failed: ours %v, theirs %v", a, b)
	}
}

func TestOracleListersRandomOps(t *testing.T) {
	for _, seed := range []uint64{7, 8} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			g := &gen{r: rand.New(rand.NewPCG(seed, 0))}
			pods := []pair{newPair(true), newPair(false)} // indexed, and the scan fallback
			rss := newPair(true)
			compared := 0
			for step := range oracleOps {
				for _, p := range pods {
					p.write(t, g, func() runtime.Object { return g.pod() })
				}
				rss.write(t, g, func() runtime.Object { return g.replicaSet() })

				ns := namespaces[g.r.IntN(len(namespaces))]
				sel := selectors[g.r.IntN(len(selectors))]
				name := "o" + strconv.Itoa(g.r.IntN(30))
				where := fmt.Sprintf("step %d ns=%q sel=%q name=%q", step, ns, sel, name)
				for _, p := range pods {
					compareFuncs(t, where, p, ns, sel)
					compareGeneric(t, where, p, ns, sel, name)
					compareTypedPods(t, where, p, ns, sel, name)
				}
				compareReplicaSets(t, where, rss, g.pod(), ns, sel, name)
				g.rv--
				compared++
				if t.Failed() {
					return
				}
			}
			if compared < oracleOps {
				t.Fatalf("compared %d steps", compared)
			}
		})
	}
}

func compareFuncs(t *testing.T, where string, p pair, ns string, sel labels.Selector) {
	t.Helper()
	var o, th []any
	errO := ListAll(p.ours, sel, func(x any) { o = append(o, x) })
	errT := kcache.ListAll(p.theirs, sel, func(x any) { th = append(th, x) })
	same(t, where+" ListAll", ids(o), ids(th), errO, errT)
	o, th = nil, nil
	errO = ListAllByNamespace(p.ours, ns, sel, func(x any) { o = append(o, x) })
	errT = kcache.ListAllByNamespace(p.theirs, ns, sel, func(x any) { th = append(th, x) })
	same(t, where+" ListAllByNamespace", ids(o), ids(th), errO, errT)
}

func compareGeneric(t *testing.T, where string, p pair, ns string, sel labels.Selector, name string) {
	t.Helper()
	res := corev1.Resource("pods")
	ol, tl := NewGenericLister(p.ours, res), kcache.NewGenericLister(p.theirs, res)
	o, errO := ol.List(sel)
	th, errT := tl.List(sel)
	same(t, where+" Generic.List", ids(o), ids(th), errO, errT)
	og, errO := ol.Get(name)
	tg, errT := tl.Get(name)
	same(t, where+" Generic.Get", ids([]runtime.Object{og}), ids([]runtime.Object{tg}), errO, errT)
	o, errO = ol.ByNamespace(ns).List(sel)
	th, errT = tl.ByNamespace(ns).List(sel)
	same(t, where+" Generic.ByNamespace.List", ids(o), ids(th), errO, errT)
	og, errO = ol.ByNamespace(ns).Get(name)
	tg, errT = tl.ByNamespace(ns).Get(name)
	same(t, where+" Generic.ByNamespace.Get", ids([]runtime.Object{og}), ids([]runtime.Object{tg}), errO, errT)
}

func compareTypedPods(t *testing.T, where string, p pair, ns string, sel labels.Selector, name string) {
	t.Helper()
	ol, tl := NewPodLister(p.ours), corelisters.NewPodLister(p.theirs)
	o, errO := ol.List(sel)
	th, errT := tl.List(sel)
	same(t, where+" PodLister.List", ids(o), ids(th), errO, errT)
	o, errO = ol.Pods(ns).List(sel)
	th, errT = tl.Pods(ns).List(sel)
	same(t, where+" Pods(ns).List", ids(o), ids(th), errO, errT)
	og, errO := ol.Pods(ns).Get(name)
	tg, errT := tl.Pods(ns).Get(name)
	same(t, where+" Pods(ns).Get", ids([]*corev1.Pod{og}), ids([]*corev1.Pod{tg}), errO, errT)
}

func compareReplicaSets(t *testing.T, where string, p pair, probe *corev1.Pod, ns string, sel labels.Selector, name string) {
	t.Helper()
	ol, tl := NewReplicaSetLister(p.ours), appslisters.NewReplicaSetLister(p.theirs)
	o, errO := ol.ReplicaSets(ns).List(sel)
	th, errT := tl.ReplicaSets(ns).List(sel)
	same(t, where+" ReplicaSets(ns).List", ids(o), ids(th), errO, errT)
	og, errO := ol.ReplicaSets(ns).Get(name)
	tg, errT := tl.ReplicaSets(ns).Get(name)
	same(t, where+" ReplicaSets(ns).Get", ids([]*appsv1.ReplicaSet{og}), ids([]*appsv1.ReplicaSet{tg}), errO, errT)
	o, errO = ol.GetPodReplicaSets(probe)
	th, errT = tl.GetPodReplicaSets(probe)
	same(t, where+fmt.Sprintf(" GetPodReplicaSets(%s/%s %v)", probe.Namespace, probe.Name, probe.Labels), ids(o), ids(th), errO, errT)
}

// ids names each object by namespace/name@resourceVersion, sorted, so results
// compare independently of map order and tell versions of one key apart.
func ids[T any](objs []T) []string {
	out := []string{}
	for _, x := range objs {
		if m, ok := any(x).(metav1.Object); ok && !isNil(x) {
			out = append(out, m.GetNamespace()+"/"+m.GetName()+"@"+m.GetResourceVersion())
		}
	}
	slices.Sort(out)
	return out
}

func isNil(x any) bool {
	switch v := x.(type) {
	case *corev1.Pod:
		return v == nil
	case *appsv1.ReplicaSet:
		return v == nil
	case nil:
		return true
	}
	return false
}

func same(t *testing.T, what string, o, th []string, errO, errT error) {
	t.Helper()
	if (errO == nil) != (errT == nil) || (errO != nil && errO.Error() != errT.Error()) {
		t.Fatalf("%s: errors differ\n ours:   %v\n theirs: %v", what, errO, errT)
	}
	if !slices.Equal(o, th) {
		t.Fatalf("%s: results differ\n ours:   %v\n theirs: %v", what, o, th)
	}
}

package store

// The differential ("oracle") test: the same random operations go to
// client-go's tools/cache Indexer and to ours, and every query must give the
// same answer. client-go is used here only as a test oracle.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// oracleOps is the number of random operations per run without the race
// detector (the issue asks for at least 10,000); under it, a tenth
// (testutil.OracleSteps).
var oracleOps = testutil.OracleSteps(20000)

// byNode and bySecret are extra index functions: one single-valued, one
// multi-valued (zero or more values), because the store treats those paths
// differently.
func byNode(obj any) ([]string, error) {
	return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
}

func bySecret(obj any) ([]string, error) {
	var out []string
	for _, v := range obj.(*corev1.Pod).Spec.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
	}
	return out, nil
}

// podGen makes random pods from a small space of names, namespaces, nodes and
// secrets, so operations collide often (updates of existing keys, deletes of
// present and absent keys, index values shared by many keys).
type podGen struct {
	r  *rand.Rand
	rv int
}

func (g *podGen) pod() *corev1.Pod {
	g.rv++
	ns := []string{"", "default", "kube-system", "team-a"}[g.r.IntN(4)]
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ns,
			Name:            "p" + strconv.Itoa(g.r.IntN(40)),
			ResourceVersion: strconv.Itoa(g.rv),
			Labels:          map[string]string{"app": []string{"web", "db", "cache"}[g.r.IntN(3)]},
		},
		Spec: corev1.PodSpec{NodeName: "node-" + strconv.Itoa(g.r.IntN(5))},
	}
	for range g.r.IntN(4) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: "s" + strconv.Itoa(g.r.IntN(6))}}})
	}
	return p
}

func TestOracleIndexerRandomOps(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runIndexerOracle(t, seed, oracleOps)
		})
	}
}

func runIndexerOracle(t *testing.T, seed uint64, ops int) {
	t.Helper()
	g := &podGen{r: rand.New(rand.NewPCG(seed, 0))}
	ours := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	theirs := kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{kcache.NamespaceIndex: kcache.MetaNamespaceIndexFunc})
	added := map[string]bool{}

	for i := range ops {
		op := g.r.IntN(100)
		var desc string
		var errO, errT error
		switch {
		case op < 35:
			p := g.pod()
			desc = "Add " + p.Namespace + "/" + p.Name
			errO, errT = ours.Add(p), theirs.Add(p)
		case op < 60:
			p := g.pod()
			desc = "Update " + p.Namespace + "/" + p.Name
			errO, errT = ours.Update(p), theirs.Update(p)
		case op < 80:
			p := g.pod()
			desc = "Delete " + p.Namespace + "/" + p.Name
			errO, errT = ours.Delete(p), theirs.Delete(p)
		case op < 83:
			n := g.r.IntN(30)
			list := make([]any, n)
			for j := range list {
				list[j] = g.pod()
			}
			rv := strconv.Itoa(g.rv)
			desc = fmt.Sprintf("Replace %d items", n)
			errO, errT = ours.Replace(list, rv), theirs.Replace(list, rv)
		case op < 85:
			// Add an index that may already exist: exercises both the
			// conflict error and the back-fill of existing items.
			name := []string{"node", "secret", NamespaceIndex}[g.r.IntN(3)]
			f := map[string]IndexFunc{"node": byNode, "secret": bySecret, NamespaceIndex: MetaNamespaceIndexFunc}[name]
			desc = "AddIndexers " + name
			errO = ours.AddIndexers(Indexers{name: f})
			errT = theirs.AddIndexers(kcache.Indexers{name: kcache.IndexFunc(f)})
			if errO == nil {
				added[name] = true
			}
		case op < 87:
			rv := strconv.Itoa(g.r.IntN(1000))
			desc = "Bookmark " + rv
			ours.Bookmark(rv)
			theirs.Bookmark(rv)
		case op < 89:
			// An object with no metadata: both must refuse it with a KeyError.
			desc = "Add non-object"
			errO, errT = ours.Add(42), theirs.Add(42)
		default:
			desc = "query"
		}
		requireSameError(t, i, desc, errO, errT)
		compareIndexers(t, i, desc, g, ours, theirs)
		if t.Failed() {
			return
		}
		if i%97 == 0 {
			checkIndexInvariant(t, ours.(*cache).cacheStorage.(*threadSafeMap))
		}
	}
	if len(added) == 0 {
		t.Fatalf("seed never added an indexer: the run did not exercise AddIndexers")
	}
}

func requireSameError(t *testing.T, step int, desc string, ours, theirs error) {
	t.Helper()
	if (ours == nil) != (theirs == nil) || (ours != nil && ours.Error() != theirs.Error()) {
		t.Fatalf("step %d %s: error differs\n ours:   %v\n theirs: %v", step, desc, ours, theirs)
	}
}

// compareIndexers runs every read query on both and requires equal answers.
func compareIndexers(t *testing.T, step int, desc string, g *podGen, ours Indexer, theirs kcache.Indexer) {
	t.Helper()
	fail := func(what string, o, th any) {
		t.Fatalf("step %d after %s: %s differs\n ours:   %v\n theirs: %v", step, desc, what, o, th)
	}
	if o, th := sortedKeys(ours.List()), sortedKeys(theirs.List()); !slices.Equal(o, th) {
		fail("List", o, th)
	}
	if o, th := sorted(ours.ListKeys()), sorted(theirs.ListKeys()); !slices.Equal(o, th) {
		fail("ListKeys", o, th)
	}
	if o, th := ours.LastStoreSyncResourceVersion(), theirs.LastStoreSyncResourceVersion(); o != th {
		fail("LastStoreSyncResourceVersion", o, th)
	}
	probe := g.pod()
	g.rv-- // probes are not writes
	key, _ := MetaNamespaceKeyFunc(probe)
	oi, oOK, oErr := ours.GetByKey(key)
	ti, tOK, tErr := theirs.GetByKey(key)
	if oOK != tOK || oi != ti || (oErr == nil) != (tErr == nil) {
		fail("GetByKey "+key, oi, ti)
	}
	oi, oOK, _ = ours.Get(probe)
	ti, tOK, _ = theirs.Get(probe)
	if oOK != tOK || oi != ti {
		fail("Get "+key, oi, ti)
	}
	if o, th := sorted(slices.Collect(mapKeys(ours.GetIndexers()))), sorted(slices.Collect(mapKeys(theirs.GetIndexers()))); !slices.Equal(o, th) {
		fail("GetIndexers", o, th)
	}
	for _, name := range []string{NamespaceIndex, "node", "secret", "missing"} {
		if o, th := sorted(ours.ListIndexFuncValues(name)), sorted(theirs.ListIndexFuncValues(name)); !slices.Equal(o, th) {
			fail("ListIndexFuncValues "+name, o, th)
		}
		value := map[string]string{NamespaceIndex: probe.Namespace, "node": probe.Spec.NodeName, "secret": "s" + strconv.Itoa(g.r.IntN(6)), "missing": "x"}[name]
		ob, oErr := ours.ByIndex(name, value)
		tb, tErr := theirs.ByIndex(name, value)
		requireSameError(t, step, desc+" ByIndex "+name, oErr, tErr)
		if o, th := sortedKeys(ob), sortedKeys(tb); !slices.Equal(o, th) {
			fail("ByIndex "+name+"="+value, o, th)
		}
		ok, oErr := ours.IndexKeys(name, value)
		tk, tErr := theirs.IndexKeys(name, value)
		requireSameError(t, step, desc+" IndexKeys "+name, oErr, tErr)
		// Not sorted here: both promise a sorted answer.
		if !slices.Equal(ok, tk) {
			fail("IndexKeys "+name+"="+value, ok, tk)
		}
		oix, oErr := ours.Index(name, probe)
		tix, tErr := theirs.Index(name, probe)
		requireSameError(t, step, desc+" Index "+name, oErr, tErr)
		if o, th := sortedKeys(oix), sortedKeys(tix); !slices.Equal(o, th) {
			fail("Index "+name, o, th)
		}
	}
}

func sorted(s []string) []string { sort.Strings(s); return s }

func sortedKeys(objs []any) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		p := o.(*corev1.Pod)
		// The RV tells apart two versions of the same key.
		out[i] = p.Namespace + "/" + p.Name + "@" + p.ResourceVersion
	}
	return sorted(out)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// checkIndexInvariant recomputes every index from items and requires the
// stored reverse maps to be exactly that, with no empty sets (the invariant
// stated on storeIndex).
func checkIndexInvariant(t *testing.T, c *threadSafeMap) {
	t.Helper()
	c.lock.RLock()
	defer c.lock.RUnlock()
	for name, f := range c.index.indexers {
		want := map[string]map[string]bool{}
		for key, item := range c.items {
			values, err := f(item)
			if err != nil {
				t.Fatalf("index %q: %v", name, err)
			}
			for _, v := range values {
				if want[v] == nil {
					want[v] = map[string]bool{}
				}
				want[v][key] = true
			}
		}
		got := c.index.indices[name]
		if len(got) != len(want) {
			t.Fatalf("index %q has %d values, recomputed %d", name, len(got), len(want))
		}
		for v, keys := range got {
			if keys.Len() == 0 {
				t.Fatalf("index %q keeps an empty set for value %q", name, v)
			}
			if keys.Len() != len(want[v]) {
				t.Fatalf("index %q value %q: stored %v, recomputed %v", name, v, keys, want[v])
			}
			for k := range keys {
				if !want[v][k] {
					t.Fatalf("index %q value %q: stale key %q", name, v, k)
				}
			}
		}
	}
}

package dropin

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/randfill"

	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

func sameBytes(a, b string) bool { return same(a, b) }

// equalAfter requires got (transformed) to be what want (an untransformed
// twin) is, to both equalities a handler or lister caller could use.
func equalAfter(t *testing.T, want, got any, what string) {
	t.Helper()
	require.True(t, reflect.DeepEqual(want, got), "%s: reflect.DeepEqual", what)
	require.True(t, apiequality.Semantic.DeepEqual(want, got), "%s: apiequality.Semantic.DeepEqual", what)
}

// Every scalegen pod is deep-equal to its untransformed twin, and the
// values that repeat across pods now share their bytes: the namespace, a
// label key, the image of pods of one ReplicaSet, managedFields' manager;
// the FieldsV1 bytes only when asked.
func TestStringTableKeepsPodsEqualAndSharesWhatRepeats(t *testing.T) {
	gen := scalegen.NewGenerator(7)
	const n = 2000
	for _, fv1 := range []bool{false, true} {
		t.Run(fmt.Sprintf("ShareFieldsV1=%v", fv1), func(t *testing.T) {
			tab := NewStringTable(StringTableOptions{ShareFieldsV1: fv1})
			pods := make([]*corev1.Pod, n)
			for i := range pods {
				p := gen.Pod(i, 0, strconv.Itoa(i+1))
				out, err := tab.Transform(p)
				require.NoError(t, err)
				require.Same(t, p, out, "changed in place, the same object returned")
				equalAfter(t, gen.Pod(i, 0, strconv.Itoa(i+1)), p, p.Name)
				pods[i] = p
			}
			// Pods 0..9 are one ReplicaSet's; 500 pods later the namespace
			// comes round again (scalegen: 50 namespaces, 10 pods each).
			a, b, c := pods[1], pods[2], pods[501]
			require.Equal(t, a.Namespace, c.Namespace)
			require.True(t, sameBytes(a.Namespace, c.Namespace), "namespace")
			shared := 0
			for _, q := range pods[2:] {
				if q.Spec.Containers[0].Image == a.Spec.Containers[0].Image {
					require.True(t, sameBytes(a.Spec.Containers[0].Image, q.Spec.Containers[0].Image), "image")
					shared++
				}
			}
			require.Positive(t, shared, "pods with pod 1's image")
			require.True(t, sameBytes(a.OwnerReferences[0].Name, b.OwnerReferences[0].Name), "owner's name")
			require.True(t, sameBytes(a.ManagedFields[1].Manager, c.ManagedFields[1].Manager), "manager")
			require.True(t, sameBytes(a.Status.PodIPs[0].IP, a.Status.PodIP), "PodIPs[0] shares PodIP's bytes")
			require.False(t, sameBytes(a.Name, b.Name), "names differ") // the test's own check
			for k := range a.Labels {
				var kc string
				for k2 := range c.Labels {
					if k2 == k {
						kc = k2
					}
				}
				require.True(t, sameBytes(k, kc), "label key %q", k)
			}
			// The scheduler's FieldsV1 is the same in every pod.
			fa, fc := a.ManagedFields[1].FieldsV1, c.ManagedFields[1].FieldsV1
			require.Equal(t, fa.GetRawString(), fc.GetRawString())
			require.Equal(t, fv1 || fieldsV1Interned, rawData(fa) == rawData(fc), "FieldsV1 shared only when asked")
			// A value only one pod has is not kept: the pod's UID.
			require.Equal(t, 0, countKept(tab, string(a.UID)))
		})
	}
}

func countKept(t *StringTable, v string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.strs[v]; ok {
		return 1
	}
	return 0
}

// A pool of values small enough that they repeat across objects.
var pool = []string{"", "a", "v1", "team-1", "team-2", "Running", "True", "app.kubernetes.io/name", "node-1", "x",
	"registry.example.com/shop/cart:v1.2.3", "kube-controller-manager"}

func randomFiller(seed uint64) *randfill.Filler {
	r := rand.New(rand.NewPCG(seed, 36))
	str := func(c randfill.Continue) string {
		if r.IntN(4) == 0 {
			return c.String(8) // a value of its own, sometimes long
		}
		return pool[r.IntN(len(pool))]
	}
	return randfill.NewWithSeed(int64(seed)).NilChance(0.2).NumElements(0, 3).Funcs(
		func(s *string, c randfill.Continue) { *s = str(c) },
		func(q *resource.Quantity, c randfill.Continue) {
			*q = resource.MustParse(strconv.Itoa(c.Intn(1000)) + "m")
		},
		func(f *metav1.FieldsV1, c randfill.Continue) { f.SetRawString(`{"f:` + str(c) + `":{}}`) },
		func(m *map[string]string, c randfill.Continue) {
			*m = map[string]string{}
			for range c.Intn(4) {
				(*m)[str(c)] = str(c)
			}
		},
	)
}

// deepCopyPod copies p with no memory shared: what a second decode of the
// same bytes would give (DeepCopy copies FieldsV1 and maps; strings may be
// shared, which does not matter to the equalities).
func deepCopyPod(p *corev1.Pod) *corev1.Pod { return p.DeepCopy() }

// Seeded random pods (every field filled or left nil at random, values
// drawn from a small pool so that they repeat) are deep-equal to their
// copies after the transform, with FieldsV1 shared or not, and again after
// a second transform.
func TestStringTableRandomPodsStayEqual(t *testing.T) {
	n := 400
	if testutil.Race {
		n = 100
	}
	for seed := uint64(1); seed <= 5; seed++ {
		f := randomFiller(seed)
		tab := NewStringTable(StringTableOptions{ShareFieldsV1: seed%2 == 0})
		for i := range n {
			p := &corev1.Pod{}
			f.Fill(p)
			want := deepCopyPod(p)
			_, err := tab.Transform(p)
			require.NoError(t, err)
			equalAfter(t, want, p, fmt.Sprintf("seed %d pod %d", seed, i))
			_, err = tab.Transform(p)
			require.NoError(t, err)
			equalAfter(t, want, p, fmt.Sprintf("seed %d pod %d, transformed twice", seed, i))
		}
		require.Positive(t, tab.Stats().Strings, "seed %d: the pool's values repeat, so some are kept", seed)
	}
}

// Other typed objects have their metadata shared and the rest untouched;
// a PartialObjectMetadata (a metadata-only informer's object) likewise.
func TestStringTableOtherTypesShareTheirMetadata(t *testing.T) {
	f := randomFiller(11)
	tab := NewStringTable(StringTableOptions{ShareFieldsV1: true})
	var cms []*corev1.ConfigMap
	for i := range 50 {
		cm := &corev1.ConfigMap{}
		f.Fill(cm)
		cm.Namespace = "team-" + strconv.Itoa(i%2) // a fresh string each time
		cm.Data = map[string]string{"k": "value-" + strconv.Itoa(i%2)}
		want := cm.DeepCopy()
		dataVal := cm.Data["k"]
		_, err := tab.Transform(cm)
		require.NoError(t, err)
		equalAfter(t, want, cm, "ConfigMap")
		require.True(t, sameBytes(dataVal, cm.Data["k"]), "data is not walked")
		cms = append(cms, cm)

		pom := &metav1.PartialObjectMetadata{}
		f.Fill(pom)
		pom.Namespace = "team-" + strconv.Itoa(i%2)
		wantPom := pom.DeepCopy()
		_, err = tab.Transform(pom)
		require.NoError(t, err)
		equalAfter(t, wantPom, pom, "PartialObjectMetadata")
	}
	require.True(t, sameBytes(cms[10].Namespace, cms[20].Namespace), "the ConfigMaps' namespace is shared")
}

// An Unstructured's keys are shared at every depth, and its metadata's
// repeated values; it stays deep-equal to its copy.
func TestStringTableUnstructured(t *testing.T) {
	tab := NewStringTable(StringTableOptions{})
	mk := func(i int) *unstructured.Unstructured {
		s := strconv.Itoa
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps" + "/v1" + s(i)[:0], "kind": "Deploy" + "ment" + s(i)[:0],
			"metadata": map[string]any{
				"name": "d-" + s(i), "namespace": "ns-" + s(i%2),
				"labels":          map[string]any{"app" + s(i)[:0]: "web" + s(i)[:0]},
				"ownerReferences": []any{map[string]any{"kind": "Thing" + s(i)[:0], "uid": "u-" + s(i%3)}},
				"managedFields": []any{map[string]any{"manager": "kubectl" + s(i)[:0],
					"fieldsV1": map[string]any{"f:spec" + s(i)[:0]: map[string]any{}}}},
				"finalizers": []any{"example.com/f" + s(i)[:0]},
			},
			"spec": map[string]any{"replicas" + s(i)[:0]: int64(i), "note": "n" + s(i)},
		}}
	}
	objs := []*unstructured.Unstructured{}
	for i := range 6 {
		u := mk(i)
		_, err := tab.Transform(u)
		require.NoError(t, err)
		equalAfter(t, mk(i), u, "Unstructured")
		objs = append(objs, u)
	}
	key := func(m map[string]any, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("no key %q", want)
		return ""
	}
	a, b := objs[3].Object, objs[5].Object
	require.True(t, sameBytes(key(a, "metadata"), key(b, "metadata")), "a top-level key")
	require.True(t, sameBytes(a["kind"].(string), b["kind"].(string)), "kind")
	ma, mb := a["metadata"].(map[string]any), b["metadata"].(map[string]any)
	require.True(t, sameBytes(ma["namespace"].(string), mb["namespace"].(string)), "namespace")
	fa := ma["managedFields"].([]any)[0].(map[string]any)["fieldsV1"].(map[string]any)
	fb := mb["managedFields"].([]any)[0].(map[string]any)["fieldsV1"].(map[string]any)
	require.True(t, sameBytes(key(fa, "f:spec"), key(fb, "f:spec")), "a fieldsV1 key")
	sa, sb := a["spec"].(map[string]any), b["spec"].(map[string]any)
	require.False(t, sameBytes(sa["note"].(string), sb["note"].(string)), "the spec's values are not walked")
}

// A second Transform of an object the table has seen writes nothing: run
// under -race beside readers of the objects (a lister's callers), it
// races with none of them, and everything stays equal.
func TestStringTableSecondTransformWritesNothing(t *testing.T) {
	gen := scalegen.NewGenerator(3)
	tab := NewStringTable(StringTableOptions{ShareFieldsV1: true})
	const n = 300
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = gen.Pod(i, 0, strconv.Itoa(i+1))
		_, err := tab.Transform(pods[i])
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := r; i < n; i += 2 {
					p := pods[i]
					_ = len(p.Namespace) + len(p.Labels["app.kubernetes.io/name"]) + len(p.ManagedFields[0].FieldsV1.GetRawString())
					for k, v := range p.Labels {
						_ = len(k) + len(v)
					}
					_ = len(p.Spec.Containers[0].Image) + len(p.Status.Conditions[2].Type)
				}
			}
		})
	}
	for i, p := range pods {
		_, err := tab.Transform(p)
		require.NoError(t, err)
		equalAfter(t, gen.Pod(i, 0, strconv.Itoa(i+1)), p, p.Name)
	}
	close(stop)
	wg.Wait()
}

// Many goroutines may transform with one table at once (several
// informers' reflectors): every object stays equal, and values are shared.
func TestStringTableConcurrentTransforms(t *testing.T) {
	gen := scalegen.NewGenerator(5)
	tab := NewStringTable(StringTableOptions{ShareFieldsV1: true})
	const workers, each = 4, 200
	got := make([][]*corev1.Pod, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				p := gen.Pod(i, w, strconv.Itoa(i+1))
				if _, err := tab.Transform(p); err != nil {
					panic(err)
				}
				got[w] = append(got[w], p)
			}
		})
	}
	wg.Wait()
	for w := range workers {
		for i, p := range got[w] {
			equalAfter(t, gen.Pod(i, w, strconv.Itoa(i+1)), p, p.Name)
		}
	}
	require.True(t, sameBytes(got[0][0].Namespace, got[3][0].Namespace))
}

// Bad input: nil is an error that says so; a tombstone and a value that is
// no object come back as they were, untouched.
func TestStringTableBadInput(t *testing.T) {
	tab := NewStringTable(StringTableOptions{})
	_, err := tab.Transform(nil)
	require.ErrorIs(t, err, ErrNilObject)
	_, err = tab.Transform((*corev1.Pod)(nil))
	require.ErrorIs(t, err, ErrNilObject)
	require.ErrorContains(t, err, "*v1.Pod")
	_, err = tab.Transform((*unstructured.Unstructured)(nil))
	require.ErrorIs(t, err, ErrNilObject)

	gen := scalegen.NewGenerator(1)
	p1, p2 := gen.Pod(1, 0, "1"), gen.Pod(2, 0, "2")
	_, err = tab.Transform(p1)
	require.NoError(t, err)
	ns := p2.Namespace
	for _, tomb := range []any{
		cache.DeletedFinalStateUnknown{Key: "team-0/x", Obj: p2},
		&cache.DeletedFinalStateUnknown{Key: "team-0/x", Obj: p2},
	} {
		out, err := tab.Transform(tomb)
		require.NoError(t, err)
		require.Equal(t, tomb, out)
		require.True(t, sameBytes(ns, p2.Namespace), "a tombstone's object is left alone")
	}
	for _, v := range []any{"a string", 42, struct{ Name string }{"x"}, &runtime.Unknown{Raw: []byte("{}")}} {
		out, err := tab.Transform(v)
		require.NoError(t, err, "%T", v)
		require.Equal(t, v, out)
	}
}

// A table keeps two generations within MaxBytes: once the newer has taken
// half of it, the older is dropped. It stays within MaxBytes, objects stay
// equal, a value first brought after that is still shared (a table that
// stopped taking values at MaxBytes left it apart), and a value no object
// has brought for two generations is forgotten: the next object that
// brings it does not get the old copy.
func TestStringTableRotatesGenerationsAtMaxBytes(t *testing.T) {
	gen := scalegen.NewGenerator(9)
	tab := NewStringTable(StringTableOptions{MaxBytes: 4 << 10})
	label := func(p *corev1.Pod, v string) *corev1.Pod {
		p.Labels["only-here"] = strings.Clone(v) // a string of its own, as decoded
		return p
	}
	transform := func(p *corev1.Pod) *corev1.Pod {
		t.Helper()
		_, err := tab.Transform(p)
		require.NoError(t, err)
		return p
	}
	early := transform(label(gen.Pod(0, 0, "1"), "early"))
	twin := transform(label(gen.Pod(1, 0, "1"), "early"))
	// same compares the strings' memory: testify's Equal on two pointers
	// would compare what they point to.
	require.True(t, same(early.Labels["only-here"], twin.Labels["only-here"]), "a repeated value is shared")
	for i := 2; i < 500; i++ {
		p := transform(gen.Pod(i, 0, "1"))
		equalAfter(t, gen.Pod(i, 0, "1"), p, p.Name)
		require.LessOrEqual(t, tab.Stats().Bytes, 4<<10)
	}
	st := tab.Stats()
	require.GreaterOrEqual(t, st.Rotations, 2, "%+v", st)

	a := transform(label(gen.Pod(1000, 0, "1"), "late"))
	b := transform(label(gen.Pod(1001, 0, "1"), "late"))
	assert.True(t, same(a.Labels["only-here"], b.Labels["only-here"]), "a value first brought after the table filled is shared")
	again := transform(label(gen.Pod(1002, 0, "1"), "early"))
	assert.False(t, same(early.Labels["only-here"], again.Labels["only-here"]), "a value gone for two generations is forgotten")
	assert.Equal(t, "early", again.Labels["only-here"])
}

// Assigning to a Go map's existing string key stores the key given: what
// strMap relies on to share label keys.
func TestMapAssignmentReplacesTheKey(t *testing.T) {
	k1 := string([]byte("key"))
	k2 := string([]byte("key"))
	m := map[string]string{k1: "v"}
	m[k2] = "v"
	for k := range m {
		require.True(t, same(k2, k), "the key is the one assigned last") // same: Equal would compare the bytes pointed to
	}
}

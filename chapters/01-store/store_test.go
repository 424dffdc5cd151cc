package store

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func pod(ns, name, rv, node string, secrets ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv},
		Spec:       corev1.PodSpec{NodeName: node},
	}
	for _, s := range secrets {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: s}}})
	}
	return p
}

func TestMetaNamespaceKeyFunc(t *testing.T) {
	tests := []struct {
		name    string
		obj     any
		want    string
		wantErr string
	}{
		{"namespaced", pod("ns", "a", "", ""), "ns/a", ""},
		{"cluster-scoped", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, "n1", ""},
		{"explicit key passes through", ExplicitKey("any/thing"), "any/thing", ""},
		{"no metadata", "just a string", "", "object has no meta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MetaNamespaceKeyFunc(tt.obj)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSplitMetaNamespaceKey(t *testing.T) {
	tests := []struct {
		key, ns, name string
		wantErr       bool
	}{
		{"ns/a", "ns", "a", false},
		{"a", "", "a", false},
		{"", "", "", false},
		{"/a", "", "a", false},
		{"a/b/c", "", "", true},
	}
	for _, tt := range tests {
		ns, name, err := SplitMetaNamespaceKey(tt.key)
		if tt.wantErr {
			assert.Error(t, err, tt.key)
			continue
		}
		require.NoError(t, err, tt.key)
		assert.Equal(t, [2]string{tt.ns, tt.name}, [2]string{ns, name}, tt.key)
	}
}

func TestObjectNameIsNotNamespacedNameString(t *testing.T) {
	// The trap the doc comment on String warns about.
	n := NewObjectName("", "node-1")
	assert.Equal(t, "node-1", n.String())
	assert.Equal(t, "/node-1", n.AsNamespacedName().String())
	assert.Equal(t, n, NamespacedNameAsObjectName(types.NamespacedName{Name: "node-1"}))
	back, err := ParseObjectName(NewObjectName("ns", "a").String())
	require.NoError(t, err)
	assert.Equal(t, NewObjectName("ns", "a"), back)
}

func TestStoreRejectsObjectWithoutKeyAndKeepsContents(t *testing.T) {
	s := NewStore(MetaNamespaceKeyFunc)
	require.NoError(t, s.Add(pod("ns", "a", "1", "")))

	err := s.Add(struct{}{})
	var ke KeyError
	require.ErrorAs(t, err, &ke, "a KeyError carries the object that had no key")
	assert.Equal(t, struct{}{}, ke.Obj)

	// Replace computes every key before touching the map: one bad item must
	// leave the store exactly as it was.
	err = s.Replace([]any{pod("ns", "b", "2", ""), 7}, "9")
	require.Error(t, err)
	assert.Equal(t, []string{"ns/a"}, s.ListKeys())
	assert.Equal(t, "1", s.LastStoreSyncResourceVersion())
}

func TestDeleteOfAbsentKeyIsNotAnError(t *testing.T) {
	s := NewStore(MetaNamespaceKeyFunc)
	require.NoError(t, s.Delete(pod("ns", "gone", "3", "")))
	assert.Empty(t, s.List())
}

func TestLastStoreSyncResourceVersion(t *testing.T) {
	s := NewStore(MetaNamespaceKeyFunc)
	steps := []struct {
		do   func()
		want string
	}{
		{func() { _ = s.Add(pod("ns", "a", "5", "")) }, "5"},
		{func() { _ = s.Update(pod("ns", "a", "7", "")) }, "7"},
		{func() { _ = s.Delete(pod("ns", "a", "9", "")) }, "9"},
		{func() { s.Bookmark("12") }, "12"},
		{func() { _ = s.Replace(nil, "20") }, "20"},
		// No metadata, so no resourceVersion: the last one stands.
		{func() { _ = s.Add(ExplicitKey("ns/bare")) }, "20"},
	}
	for i, st := range steps {
		st.do()
		assert.Equal(t, st.want, s.LastStoreSyncResourceVersion(), "step %d", i)
	}
	ts := NewThreadSafeStore(nil, nil)
	ts.Add("k", 1)
	ts.Update("k", pod("", "k", "3", ""))
	ts.Delete("k") // without the object: the RV does not move
	assert.Equal(t, "3", ts.LastStoreSyncResourceVersion())
}

func newPodIndexer() Indexer {
	return NewIndexer(MetaNamespaceKeyFunc, Indexers{
		NamespaceIndex: MetaNamespaceIndexFunc,
		"node":         byNode,
		"secret":       bySecret,
	})
}

func TestReplaceSwapsContentsAndRebuildsIndexes(t *testing.T) {
	idx := newPodIndexer()
	require.NoError(t, idx.Add(pod("old", "a", "1", "n1")))
	require.NoError(t, idx.Replace([]any{pod("new", "b", "2", "n2")}, "10"))

	assert.Equal(t, []string{"new/b"}, idx.ListKeys())
	got, err := idx.ByIndex(NamespaceIndex, "old")
	require.NoError(t, err)
	assert.Empty(t, got, "index entries of replaced-away objects must be gone")
	assert.ElementsMatch(t, []string{"n2"}, idx.ListIndexFuncValues("node"))
	assert.Equal(t, "10", idx.LastStoreSyncResourceVersion())
}

func TestEmptiedIndexValueIsRemoved(t *testing.T) {
	idx := newPodIndexer()
	require.NoError(t, idx.Add(pod("ns", "a", "1", "n1")))
	require.NoError(t, idx.Update(pod("ns", "a", "2", "n2")))
	assert.ElementsMatch(t, []string{"n2"}, idx.ListIndexFuncValues("node"))
	require.NoError(t, idx.Delete(pod("ns", "a", "3", "n2")))
	assert.Empty(t, idx.ListIndexFuncValues("node"))
	assert.Empty(t, idx.ListIndexFuncValues(NamespaceIndex))
}

func TestUpdateWithUnchangedIndexValuesDoesNoIndexWork(t *testing.T) {
	idx := newPodIndexer()
	require.NoError(t, idx.Add(pod("ns", "a", "1", "n1", "s1", "s2")))
	tsm := idx.(*cache).cacheStorage.(*threadSafeMap)
	setPtr := func(index, value string) uintptr {
		return reflect.ValueOf(tsm.index.indices[index][value]).Pointer()
	}
	before := []uintptr{setPtr("node", "n1"), setPtr("secret", "s1"), setPtr("secret", "s2")}

	require.NoError(t, idx.Update(pod("ns", "a", "2", "n1", "s1", "s2")))

	// Had the key been removed and re-added, each set would have emptied,
	// been deleted and been made anew: a different map.
	after := []uintptr{setPtr("node", "n1"), setPtr("secret", "s1"), setPtr("secret", "s2")}
	assert.Equal(t, before, after)
}

func TestUnknownIndexName(t *testing.T) {
	idx := newPodIndexer()
	_, err := idx.ByIndex("nope", "x")
	assert.EqualError(t, err, "Index with name nope does not exist")
	_, err = idx.IndexKeys("nope", "x")
	assert.EqualError(t, err, "Index with name nope does not exist")
	_, err = idx.Index("nope", pod("ns", "a", "", ""))
	assert.EqualError(t, err, "Index with name nope does not exist")
	assert.Empty(t, idx.ListIndexFuncValues("nope"))
}

func TestAddIndexers(t *testing.T) {
	idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	require.NoError(t, idx.Add(pod("ns", "a", "1", "n1")))
	require.NoError(t, idx.Add(pod("ns", "b", "1", "n1")))

	err := idx.AddIndexers(Indexers{"node": byNode, NamespaceIndex: MetaNamespaceIndexFunc})
	require.EqualError(t, err, "indexer conflict: map[namespace:{}]")
	assert.Len(t, idx.GetIndexers(), 1, "a conflict adds nothing, not even the other names")

	require.NoError(t, idx.AddIndexers(Indexers{"node": byNode}))
	keys, err := idx.IndexKeys("node", "n1")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/a", "ns/b"}, keys, "objects stored before the index existed are back-filled")
}

func TestMultiValueIndex(t *testing.T) {
	idx := newPodIndexer()
	require.NoError(t, idx.Add(pod("ns", "a", "1", "", "s1", "s2")))
	require.NoError(t, idx.Add(pod("ns", "b", "1", "", "s2", "s3")))
	require.NoError(t, idx.Add(pod("ns", "c", "1", ""))) // no secrets: in no secret value

	keys, err := idx.IndexKeys("secret", "s2")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/a", "ns/b"}, keys)
	assert.ElementsMatch(t, []string{"s1", "s2", "s3"}, idx.ListIndexFuncValues("secret"))

	// Index with a multi-valued probe returns each match once.
	got, err := idx.Index("secret", pod("", "probe", "", "", "s1", "s2", "s3"))
	require.NoError(t, err)
	assert.Len(t, got, 2)

	require.NoError(t, idx.Update(pod("ns", "a", "2", "", "s3")))
	keys, _ = idx.IndexKeys("secret", "s1")
	assert.Empty(t, keys)
	assert.ElementsMatch(t, []string{"s2", "s3"}, idx.ListIndexFuncValues("secret"))
}

func TestIndexFuncErrorPanicsWithContext(t *testing.T) {
	failing := func(any) ([]string, error) { return nil, errors.New("boom") }
	idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{"bad": failing})
	assert.PanicsWithError(t,
		`unable to calculate an index entry for key "ns/a" on index "bad": boom`,
		func() { _ = idx.Add(pod("ns", "a", "1", "")) })
	// The lock was released by the panic (defer): the store still answers.
	assert.NotPanics(t, func() { idx.ListKeys() })
}

func TestIndexFuncToKeyFuncAdapter(t *testing.T) {
	kf := IndexFuncToKeyFuncAdapter(bySecret)
	k, err := kf(pod("ns", "a", "", "", "s1"))
	require.NoError(t, err)
	assert.Equal(t, "s1", k)
	_, err = kf(pod("ns", "a", "", ""))
	assert.EqualError(t, err, "unexpected empty indexKeys")
	_, err = kf(pod("ns", "a", "", "", "s1", "s2"))
	assert.EqualError(t, err, "too many keys: [s1 s2]")
}

func TestGetIndexersReturnsACopy(t *testing.T) {
	idx := newPodIndexer()
	got := idx.GetIndexers()
	delete(got, "node")
	assert.Len(t, idx.GetIndexers(), 3)
}

func TestThreadSafeStoreReplaceNilMap(t *testing.T) {
	ts := NewThreadSafeStore(Indexers{"node": byNode}, Indices{})
	ts.Replace(nil, "1")
	assert.NotPanics(t, func() { ts.Add("ns/a", pod("ns", "a", "2", "n1")) })
	got, err := ts.ByIndex("node", "n1")
	require.NoError(t, err)
	assert.Len(t, got, 1)
}

// Len counts what ListKeys lists, through adds, an update, a delete and a
// Replace, for both the Store and the Indexer.
func TestLenCountsWhatListKeysLists(t *testing.T) {
	for _, s := range []Store{NewStore(MetaNamespaceKeyFunc), NewIndexer(MetaNamespaceKeyFunc, Indexers{})} {
		l := s.(interface{ Len() int })
		check := func(what string, want int) {
			t.Helper()
			require.Len(t, s.ListKeys(), want, what)
			require.Equal(t, want, l.Len(), what)
		}
		check("empty", 0)
		for i := range 5 {
			require.NoError(t, s.Add(pod("ns", fmt.Sprint("p", i), "1", "n")))
		}
		require.NoError(t, s.Add(pod("ns", "p0", "2", "n")))
		check("five adds and an update", 5)
		require.NoError(t, s.Delete(pod("ns", "p1", "3", "n")))
		check("a delete", 4)
		require.NoError(t, s.Replace([]any{pod("ns", "q", "4", "n")}, "4"))
		check("a replace", 1)
	}
}

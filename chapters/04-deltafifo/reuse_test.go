package deltafifo

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
)

// What ReuseRelisted hands back for one arriving object (the queue's half
// of reflector.ReusingStore), against a cache holding one pod.

func reusePod(uid, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: types.UID(uid), ResourceVersion: rv,
		Labels: map[string]string{"copy": "arrived"}}}
}

func TestReuseRelistedHandsBackOnlyTheSameObjectInTheSameState(t *testing.T) {
	cached := reusePod("u1", "5")
	cached.Labels["copy"] = "cached"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "5"}}
	for _, tc := range []struct {
		name     string
		cached   any // nil: nothing cached under the key
		arrived  any
		reused   bool
		prepared bool
	}{
		{"same UID and resourceVersion", cached, reusePod("u1", "5"), true, true},
		{"changed: another resourceVersion", cached, reusePod("u1", "6"), false, false},
		{"re-created: another UID", cached, reusePod("u2", "5"), false, false},
		{"no UID: nothing says it is the same object", func() any { p := cached.DeepCopy(); p.UID = ""; return p }(), reusePod("", "5"), false, false},
		{"a cached object of another type", cm, reusePod("u1", "5"), false, false},
		{"nothing cached (a first list)", nil, reusePod("u1", "5"), false, false},
		{"a tombstone", cached, DeletedFinalStateUnknown{Key: "ns/p", Obj: reusePod("u1", "5")}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := store.NewStore(store.MetaNamespaceKeyFunc)
			if tc.cached != nil {
				require.NoError(t, cache.Add(tc.cached))
			}
			for _, q := range []struct {
				name string
				r    reflector.ReusingStore
			}{
				{"RealFIFO atomic", NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, RelistCache: cache})},
				{"RealFIFO", NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: cache})},
				{"DeltaFIFO", NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: cache})},
			} {
				out, prepared := q.r.ReuseRelisted(tc.arrived)
				if tc.reused {
					assert.Same(t, tc.cached, out, "%s: the cached object comes back", q.name)
				} else {
					assert.Equal(t, tc.arrived, out, "%s: the arrived object comes back as it came", q.name)
				}
				assert.Equal(t, tc.prepared, prepared, "%s: prepared", q.name)
			}
		})
	}
	t.Run("an atomic RealFIFO without a RelistCache reuses nothing", func(t *testing.T) {
		out, prepared := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true}).ReuseRelisted(reusePod("u1", "5"))
		assert.False(t, prepared)
		assert.Equal(t, "arrived", out.(*corev1.Pod).Labels["copy"])
	})
}

func TestReuseRelistedCallsTheTransformerOnTheArrivedCopyOnly(t *testing.T) {
	cached := reusePod("u1", "5")
	cache := store.NewStore(store.MetaNamespaceKeyFunc)
	require.NoError(t, cache.Add(cached))
	var seen []any
	strip := func(obj any) (any, error) {
		seen = append(seen, obj)
		return obj, nil
	}
	q := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, RelistCache: cache, Transformer: strip})

	arrived := reusePod("u1", "5")
	out, prepared := q.ReuseRelisted(arrived)
	assert.Same(t, cached, out)
	assert.True(t, prepared)
	require.Len(t, seen, 1, "the one call Replace would have made")
	assert.Same(t, arrived, seen[0], "the transformer gets the arrived copy, never the cached object")

	seen = nil
	changed := reusePod("u1", "6")
	out, prepared = q.ReuseRelisted(changed)
	assert.Same(t, changed, out)
	assert.False(t, prepared)
	assert.Empty(t, seen, "a changed object is left for Replace to transform, as upstream")

	t.Run("a transformer that fails leaves the object to Replace", func(t *testing.T) {
		failing := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, RelistCache: cache,
			Transformer: func(any) (any, error) { return nil, errors.New("no") }})
		out, prepared := failing.ReuseRelisted(arrived)
		assert.Same(t, arrived, out)
		assert.False(t, prepared, "Replace calls the transformer again and fails the relist, as upstream's")
		require.ErrorContains(t, failing.Replace([]any{out}, "7"), "no")
	})
	t.Run("a transformer that rewrites the resourceVersion keeps its result", func(t *testing.T) {
		rewriting := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, RelistCache: cache,
			Transformer: func(obj any) (any, error) {
				p := obj.(*corev1.Pod).DeepCopy()
				p.ResourceVersion = "x"
				return p, nil
			}})
		out, prepared := rewriting.ReuseRelisted(reusePod("u1", "5"))
		assert.True(t, prepared, "transformed already")
		assert.NotSame(t, cached, out)
		assert.Equal(t, "x", out.(*corev1.Pod).ResourceVersion)
	})
}

// A prepared entry of a Replace is not transformed again; the others are,
// on every kind of queue.
func TestReplaceSkipsTheTransformForPreparedEntries(t *testing.T) {
	calls := 0
	count := func(obj any) (any, error) { calls++; return obj, nil }
	list := []any{reusePod("u1", "5"), func() any { p := reusePod("u2", "5"); p.Name = "q"; return p }()}
	ctx := reflector.WithPrepared(context.Background(), []bool{true, false})
	known := store.NewStore(store.MetaNamespaceKeyFunc)
	for _, q := range []struct {
		name string
		c    reflector.ContextStore
	}{
		{"RealFIFO atomic", NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, Transformer: count})},
		{"RealFIFO", NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: known, Transformer: count})},
		{"DeltaFIFO", NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known, Transformer: count})},
	} {
		calls = 0
		require.NoError(t, q.c.ReplaceWithContext(ctx, list, "7"))
		assert.Equal(t, 1, calls, "%s: only the unprepared entry is transformed", q.name)
		calls = 0
		require.NoError(t, q.c.ReplaceWithContext(context.Background(), list, "8"))
		assert.Equal(t, 2, calls, "%s: without flags every entry is, as upstream", q.name)
	}
}

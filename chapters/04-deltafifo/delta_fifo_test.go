package deltafifo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

func mk(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// popAll pops until the queue is empty and describes each pop as
// "key: Type(rv) Type(rv) [initial]".
func popAll(t *testing.T, f *DeltaFIFO) []string {
	t.Helper()
	var out []string
	for {
		f.lock.Lock()
		n := len(f.queue)
		f.lock.Unlock()
		if n == 0 {
			return out
		}
		_, err := f.Pop(func(obj any, initial bool) error {
			d := obj.(Deltas)
			key, _ := f.KeyOf(d)
			var parts []string
			for _, x := range d {
				switch o := x.Object.(type) {
				case DeletedFinalStateUnknown:
					obj := "nil"
					if o.Obj != nil {
						obj = o.Obj.(*corev1.Pod).ResourceVersion
					}
					parts = append(parts, fmt.Sprintf("%s(tombstone %s)", x.Type, obj))
				case *corev1.Pod:
					parts = append(parts, fmt.Sprintf("%s(%s)", x.Type, o.ResourceVersion))
				}
			}
			s := key + ": " + strings.Join(parts, " ")
			if initial {
				s += " [initial]"
			}
			out = append(out, s)
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, f.checkInvariant())
	}
}

func TestChangesAccumulatePerKeyAndKeysKeepTheirPlace(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	require.NoError(t, f.Add(mk("a", "1")))
	require.NoError(t, f.Add(mk("b", "2")))
	require.NoError(t, f.Update(mk("a", "3")))
	require.NoError(t, f.Update(mk("a", "4")))
	assert.Equal(t, []string{
		"ns/a: Added(1) Updated(3) Updated(4)", // every change, in order; a stays first
		"ns/b: Added(2)",
	}, popAll(t, f))
}

func TestOnlyConsecutiveDeletesCollapse(t *testing.T) {
	tests := []struct {
		name string
		ops  func(f *DeltaFIFO)
		want []string
	}{
		{"two deletes keep the older", func(f *DeltaFIFO) {
			_ = f.Add(mk("a", "1"))
			_ = f.Delete(mk("a", "2"))
			_ = f.Delete(mk("a", "3"))
		}, []string{"ns/a: Added(1) Deleted(2)"}},
		{"a tombstone gives way to a real delete", func(f *DeltaFIFO) {
			_ = f.Add(mk("a", "1"))
			_ = f.Replace(nil, "5") // a is queued, not listed: tombstone
			_ = f.Delete(mk("a", "6"))
		}, []string{"ns/a: Added(1) Deleted(6)"}},
		{"updates are never collapsed", func(f *DeltaFIFO) {
			_ = f.Add(mk("a", "1"))
			_ = f.Update(mk("a", "1"))
			_ = f.Update(mk("a", "1"))
		}, []string{"ns/a: Added(1) Updated(1) Updated(1)"}},
		{"delete of a key neither queued nor known is a no-op", func(f *DeltaFIFO) {
			_ = f.Delete(mk("ghost", "1"))
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
			tt.ops(f)
			assert.Equal(t, tt.want, popAll(t, f))
		})
	}
}

func TestReplaceQueuesReplacedOrSyncThenTombstones(t *testing.T) {
	for _, emit := range []bool{false, true} {
		t.Run(fmt.Sprintf("EmitDeltaTypeReplaced=%v", emit), func(t *testing.T) {
			known := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
			_ = known.Add(mk("cached-gone", "1"))   // known, not listed, not queued
			_ = known.Add(mk("cached-listed", "2")) // known and listed
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: emit})
			require.NoError(t, f.Update(mk("queued-gone", "3"))) // queued, not listed
			require.NoError(t, f.Replace([]any{mk("cached-listed", "4"), mk("new", "5")}, "9"))
			typ := "Sync"
			if emit {
				typ = "Replaced"
			}
			assert.ElementsMatch(t, []string{
				"ns/queued-gone: Updated(3) Deleted(tombstone 3)", // the newest queued state
				"ns/cached-listed: " + typ + "(4)",
				"ns/new: " + typ + "(5)",
				"ns/cached-gone: Deleted(tombstone 1)", // the cached state
			}, popAll(t, f))
		})
	}
}

func TestResyncOnlyKnownKeysWithNothingPending(t *testing.T) {
	known := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	_ = known.Add(mk("idle", "1"))
	_ = known.Add(mk("busy", "2"))
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known})
	require.NoError(t, f.Update(mk("busy", "3")))
	require.NoError(t, f.Resync())
	assert.ElementsMatch(t, []string{"ns/busy: Updated(3)", "ns/idle: Sync(1)"}, popAll(t, f),
		"a Sync behind a pending Update would replay the older cached state")

	noKnown := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	require.NoError(t, noKnown.Resync())
	assert.Empty(t, popAll(t, noKnown), "without known objects there is nothing to resync")
}

func TestTransformerRunsOnEnqueueExceptTombstonesAndSync(t *testing.T) {
	known := store.NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	var seen []string
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: known, Transformer: func(o any) (any, error) {
		seen = append(seen, o.(*corev1.Pod).Name)
		return o, nil
	}})
	_ = f.Add(mk("added", "1"))
	_ = f.Replace([]any{mk("listed", "2")}, "2") // recorded as Sync, transformed as a relist
	popAll(t, f)
	_ = known.Add(mk("cached", "3"))
	_ = f.Resync()              // Sync from the cache: not transformed again
	_ = f.Replace([]any{}, "4") // tombstones: not transformed
	assert.Equal(t, []string{"added", "listed"}, seen)

	boom := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Transformer: func(any) (any, error) { return nil, errors.New("boom") }})
	assert.EqualError(t, boom.Add(mk("x", "1")), "boom")
	assert.Empty(t, popAll(t, boom), "a failed transform queues nothing")
}

func TestHasSyncedAndIsInInitialList(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	assert.False(t, f.HasSynced(), "nothing has happened yet")
	require.NoError(t, f.Replace([]any{mk("a", "1"), mk("b", "2")}, "2"))
	require.NoError(t, f.Add(mk("c", "3"))) // after the list: not part of it
	assert.False(t, f.HasSynced())
	got := popAll(t, f)
	assert.Equal(t, []string{"ns/a: Sync(1) [initial]", "ns/b: Sync(2) [initial]", "ns/c: Added(3)"}, got)
	assert.True(t, f.HasSynced())

	early := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	require.NoError(t, early.Add(mk("a", "1")))
	assert.True(t, early.HasSynced(), "an Add before any Replace: synced at once")
	require.NoError(t, early.Replace([]any{mk("b", "2")}, "2"))
	assert.True(t, early.HasSynced(), "only the first population counts")
}

func TestCloseWakesABlockedPopWithoutDroppingItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
		errc := make(chan error, 1)
		go func() {
			_, err := f.Pop(func(any, bool) error { return nil })
			errc <- err
		}()
		synctest.Wait() // Pop is blocked on the empty queue
		f.Close()
		assert.ErrorIs(t, <-errc, ErrFIFOClosed)
		assert.True(t, f.IsClosed())
	})
	closed := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	_ = closed.Add(mk("a", "1"))
	closed.Close()
	_, err := closed.Pop(func(any, bool) error { return nil })
	assert.NoError(t, err, "items queued before Close are still popped")
	_, err = closed.Pop(func(any, bool) error { return nil })
	assert.ErrorIs(t, err, ErrFIFOClosed)
}

func TestKeyOf(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	k, err := f.KeyOf(Deltas{{Type: Added, Object: mk("a", "1")}, {Type: Deleted, Object: DeletedFinalStateUnknown{Key: "ns/a"}}})
	require.NoError(t, err)
	assert.Equal(t, "ns/a", k)
	_, err = f.KeyOf(Deltas{})
	assert.ErrorIs(t, err, ErrZeroLengthDeltasObject)
	assert.Error(t, f.Add("not an object"))
}

func TestProcessErrorDoesNotRequeue(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	_ = f.Add(mk("a", "1"))
	_, err := f.Pop(func(any, bool) error { return errors.New("handler failed") })
	assert.EqualError(t, err, "handler failed")
	assert.Empty(t, popAll(t, f))
}

func TestPopKeysIsPopRepeated(t *testing.T) {
	single := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	batch := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	for _, f := range []*DeltaFIFO{single, batch} {
		_ = f.Replace([]any{mk("a", "1"), mk("b", "2")}, "2")
		_ = f.Add(mk("c", "3"))
		_ = f.Update(mk("a", "4"))
	}
	want := popAll(t, single)
	var got []string
	n, err := batch.PopKeys(func(obj any, initial bool) error {
		d := obj.(Deltas)
		key, _ := batch.KeyOf(d)
		s := key + ":"
		for _, x := range d {
			s += " " + string(x.Type)
		}
		got = append(got, fmt.Sprintf("%s initial=%v", s, initial))
		return nil
	}, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "at most max keys")
	assert.Equal(t, []string{"ns/a: Sync Updated initial=true", "ns/b: Sync initial=true"}, got)
	assert.Equal(t, want[2:], popAll(t, batch), "the rest pops as usual")

	batch.Close()
	_, err = batch.PopKeys(func(any, bool) error { return nil }, 5)
	assert.ErrorIs(t, err, ErrFIFOClosed)
}

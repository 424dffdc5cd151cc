package liveprobe

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/livepage"
)

// The estimate: a typed object's is its protobuf size; an unstructured
// one's grows with what it holds.
func TestObjectSize(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": strings.Repeat("x", 1000)}}
	assert.Equal(t, int64(cm.Size()), ObjectSize(cm))
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a"}}}
	small := ObjectSize(u)
	assert.Positive(t, small)
	u.Object["data"] = map[string]any{"k": strings.Repeat("x", 1000)}
	assert.GreaterOrEqual(t, ObjectSize(u), small+1000)
	assert.Zero(t, ObjectSize(nil))
}

// What both pages show of an informer: nothing known (-1, no relist)
// before the count starts and without a probe; once started, the total
// moves with each change told to Stored (none for the same object again,
// as a resync tells it); through a transform, the bytes before it are
// the held bytes scaled by what it kept, an object given back to it
// counted once; the probe's relist with its
// duration in milliseconds.
func TestHoldings(t *testing.T) {
	assert.Equal(t, livepage.Holdings{CachedBytes: -1, BytesBeforeTransform: -1}, Holdings(nil, nil))

	var b CacheBytes
	cm := func(n int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Data: map[string]string{"k": strings.Repeat("x", n)}}
	}
	b.Stored(nil, cm(10)) // not counting yet
	assert.Equal(t, livepage.Holdings{CachedBytes: -1, BytesBeforeTransform: -1}, Holdings(&b, nil), "before Start")

	inf := processor.NewSharedIndexInformerWithOptions(watchesInTurn(nil, nil), &corev1.ConfigMap{},
		processor.SharedIndexInformerOptions{Observer: processor.Observer{Stored: b.Stored}})
	b.Start(inf) // its cache is empty
	assert.Equal(t, int64(0), Holdings(&b, nil).CachedBytes)
	one, two := cm(100), cm(300)
	b.Stored(nil, one)
	assert.Equal(t, ObjectSize(one), Holdings(&b, nil).CachedBytes)
	b.Stored(one, one) // a resync
	b.Stored(one, two)
	assert.Equal(t, ObjectSize(two), Holdings(&b, nil).CachedBytes)
	b.Stored(two, nil)
	assert.Equal(t, int64(0), Holdings(&b, nil).CachedBytes)
	assert.Equal(t, int64(-1), Holdings(&b, nil).BytesBeforeTransform, "no transform")

	var tb CacheBytes
	strip := tb.Transform(func(o any) (any, error) { o.(*corev1.ConfigMap).Data = nil; return o, nil })
	tb.Start(inf)
	full := cm(1000)
	in := ObjectSize(full)
	// A stream's initial state (the probe tells it: Follow): a streamed
	// object comes to the transform again, as it returned it (the
	// RealFIFO's Replace), and is not counted a second time.
	tb.Follow(NewReflectorProbe(watchesInTurn(nil, nil)))
	tb.streams.window(true)
	out, err := strip(full)
	require.NoError(t, err)
	again, err := strip(out)
	require.NoError(t, err)
	tb.Stored(nil, again)
	h := Holdings(&tb, nil)
	assert.Equal(t, ObjectSize(out), h.CachedBytes)
	assert.Equal(t, in, h.BytesBeforeTransform, "one object: before is what it was given")
	tb.streams.mu.Lock()
	assert.Empty(t, tb.streams.given, "an object that entered the cache is forgotten")
	tb.streams.mu.Unlock()
	_, err = strip(cm(1000)) // never stored: a relisted copy exchanged for the cached one
	require.NoError(t, err)
	tb.streams.window(false)
	tb.streams.mu.Lock()
	assert.Nil(t, tb.streams.given, "the window closed: nothing remembered")
	tb.streams.mu.Unlock()
	// Outside a stream, nothing is remembered: a watch event is given to
	// the transform once.
	_, err = strip(cm(500))
	require.NoError(t, err)
	tb.streams.mu.Lock()
	assert.Nil(t, tb.streams.given, "a watch event is not remembered")
	tb.streams.mu.Unlock()

	p := NewReflectorProbe(watchesInTurn(nil, nil))
	started := time.Now()
	p.mu.Lock()
	p.beginRelist_locked()
	p.relist.Objects = 7
	p.mu.Unlock()
	p.NoteHeap(1 << 20)
	h = Holdings(nil, p)
	require.NotNil(t, h.LastRelist)
	assert.Equal(t, "start", h.LastRelist.Reason)
	assert.Equal(t, int64(-1), h.LastRelist.DurationMillis, "still fetching")
	assert.Equal(t, uint64(1<<20), h.LastRelist.PeakHeap)
	assert.InDelta(t, started.UnixMilli(), h.LastRelist.StartedMillis, 1000)
	p.mu.Lock()
	p.endRelist_locked()
	p.relist.Ended = p.relist.Started.Add(1500 * time.Millisecond)
	p.mu.Unlock()
	h = Holdings(nil, p)
	assert.Equal(t, int64(1500), h.LastRelist.DurationMillis)
	assert.Equal(t, 7, h.LastRelist.Objects)
}

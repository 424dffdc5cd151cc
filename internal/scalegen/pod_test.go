package scalegen

import (
	"encoding/json"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// The same seed gives the same pods; another seed other pods; an update
// changes the status and the resourceVersion, not the pod's identity.
func TestTheSeedDecidesThePods(t *testing.T) {
	a, b, c := NewGenerator(1), NewGenerator(1), NewGenerator(2)
	for _, i := range []int{0, 1, 9, 10, 12345} {
		require.True(t, equality.Semantic.DeepEqual(a.Pod(i, 0, "7"), b.Pod(i, 0, "7")), "pod %d", i)
		require.NotEqual(t, a.Pod(i, 0, "7").UID, c.Pod(i, 0, "7").UID, "pod %d", i)
		require.Equal(t, a.Key(i), a.Pod(i, 0, "7").Namespace+"/"+a.Pod(i, 0, "7").Name)
	}
	old, upd := a.Pod(3, 0, "7"), a.Update(3, 0, "8")
	require.Equal(t, old.UID, upd.UID)
	require.Equal(t, "8", upd.ResourceVersion)
	require.True(t, equality.Semantic.DeepEqual(old.Spec, upd.Spec))
	require.False(t, equality.Semantic.DeepEqual(old.Status, upd.Status))
	require.Equal(t, int32(1), upd.Status.ContainerStatuses[0].RestartCount)
	require.NotEqual(t, a.Key(0), a.Key(1))
	require.NotEqual(t, a.Pod(0, 0, "1").UID, a.Pod(1, 0, "1").UID)
}

// Two calls for the same pod share no memory, as two decodings share none:
// otherwise a cache of generated pods would weigh less than a real one.
func TestPodsShareNoMemory(t *testing.T) {
	g := NewGenerator(1)
	a, b := g.Pod(5, 0, "1"), g.Pod(5, 0, "1")
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for name, pair := range map[string][2]string{
		"name":           {a.Name, b.Name},
		"namespace":      {a.Namespace, b.Namespace},
		"image":          {a.Spec.Containers[0].Image, b.Spec.Containers[0].Image},
		"status image":   {a.Status.ContainerStatuses[0].Image, b.Status.ContainerStatuses[0].Image},
		"env name":       {a.Spec.Containers[0].Env[0].Name, b.Spec.Containers[0].Env[0].Name},
		"manager":        {a.ManagedFields[2].Manager, b.ManagedFields[2].Manager},
		"scheduler name": {a.Spec.SchedulerName, b.Spec.SchedulerName},
		"pod IP":         {a.Status.PodIP, b.Status.PodIP},
	} {
		require.False(t, same(pair[0], pair[1]), "%s shared", name)
	}
	for k, v := range a.Labels {
		for k2, v2 := range b.Labels {
			require.False(t, same(k, k2) || same(v, v2), "label %s shared", k)
		}
	}
	require.NotSame(t, &a.ManagedFields[0].FieldsV1.GetRawBytes()[0], &b.ManagedFields[0].FieldsV1.GetRawBytes()[0])
	require.True(t, json.Valid(a.ManagedFields[0].FieldsV1.GetRawBytes()) && json.Valid(a.ManagedFields[2].FieldsV1.GetRawBytes()))
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A generated pod weighs what the same pod weighs once decoded from JSON
// (within 10%): about 9 KB, between the 6.7 KB of issue 36's scratch pods
// and the 10-16 KB a pod weighs in the caches reported from real clusters
// (client-go #1377: 50,000 pods, 800 MB).
func TestAPodWeighsWhatADecodedPodWeighs(t *testing.T) {
	const n = 2000
	g := NewGenerator(1)
	raw := make([][]byte, n)
	for i := range raw {
		var err error
		raw[i], err = json.Marshal(g.Pod(i, 0, "1"))
		require.NoError(t, err)
	}
	before := liveHeap()
	generated := make([]*corev1.Pod, n)
	for i := range generated {
		generated[i] = g.Pod(i, 0, "1")
	}
	perGenerated := float64(liveHeap()-before) / n
	runtime.KeepAlive(generated)
	generated = nil

	before = liveHeap()
	decoded := make([]*corev1.Pod, n)
	for i := range decoded {
		decoded[i] = &corev1.Pod{}
		require.NoError(t, json.Unmarshal(raw[i], decoded[i]))
	}
	perDecoded := float64(liveHeap()-before) / n
	runtime.KeepAlive(decoded)
	t.Logf("per pod: generated %.0f B, decoded %.0f B, JSON %d B", perGenerated, perDecoded, len(raw[0]))
	require.InDelta(t, 1, perGenerated/perDecoded, 0.10, "generated %.0f B a pod, decoded %.0f B", perGenerated, perDecoded)
	require.Greater(t, perGenerated, 6000.0)
	require.Less(t, perGenerated, 11000.0)
}

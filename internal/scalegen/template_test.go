package scalegen

import (
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
)

// TemplatePod: the same arguments give equal pods that share no FieldsV1
// bytes and no string built from the name or the variant (a cache of them
// holds a copy each, as of decoded pods); another variant changes what an
// update would, not the pod's identity; every FieldsV1 is JSON.
func TestTemplatePod(t *testing.T) {
	a, b := TemplatePod("ns", "web-1", 1), TemplatePod("ns", "web-1", 1)
	require.True(t, equality.Semantic.DeepEqual(a, b))
	for i := range a.ManagedFields {
		ra, rb := a.ManagedFields[i].FieldsV1.GetRawBytes(), b.ManagedFields[i].FieldsV1.GetRawBytes()
		require.True(t, json.Valid(ra), "entry %d", i)
		require.NotSame(t, &ra[0], &rb[0], "entry %d's FieldsV1 shared", i)
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	require.False(t, same(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image), "image shared")
	require.False(t, same(a.Spec.Containers[0].Env[2].Value, b.Spec.Containers[0].Env[2].Value), "env value shared")
	require.False(t, same(a.Status.ContainerStatuses[1].ContainerID, b.Status.ContainerStatuses[1].ContainerID), "container ID shared")

	c := TemplatePod("ns", "web-1", 2)
	require.Equal(t, a.Name, c.Name)
	require.Equal(t, a.OwnerReferences, c.OwnerReferences)
	require.NotEqual(t, a.Spec.Containers[0].Image, c.Spec.Containers[0].Image)
	require.NotEqual(t, a.Labels["variant"], c.Labels["variant"])
	require.NotEqual(t, a.Annotations["example.com/owner"], c.Annotations["example.com/owner"])
}

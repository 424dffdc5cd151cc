package processor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kcache "k8s.io/client-go/tools/cache"
)

// TestInformerNamesMatchClientGo runs one sequence of registrations,
// identifiers and releases on client-go's registry and on ours, and
// requires the same answers at every step.
func TestInformerNamesMatchClientGo(t *testing.T) {
	ResetInformerNamesForTesting()
	kcache.ResetInformerNamesForTesting()
	t.Cleanup(func() { ResetInformerNamesForTesting(); kcache.ResetInformerNamesForTesting() })
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	var log, want []string
	note := func(l *[]string, format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

	// ours
	_, err := NewInformerName("")
	note(&log, "empty: %v", err)
	a, err := NewInformerName("scheduler")
	note(&log, "a: %v %q", err, a.Name())
	_, err = NewInformerName("scheduler")
	note(&log, "again: %v", err)
	p1, p2, c1 := a.WithResource(pods), a.WithResource(pods), a.WithResource(cms)
	note(&log, "reserved: %v %v %v %q %v", p1.Reserved(), p2.Reserved(), c1.Reserved(), p1.Name(), p1.GroupVersionResource())
	var nilName *InformerName
	n := nilName.WithResource(pods)
	note(&log, "nil: %v %q %q", n.Reserved(), n.Name(), nilName.Name())
	a.Release()
	note(&log, "released: %v %v", p1.Reserved(), c1.Reserved())
	b, err := NewInformerName("scheduler")
	note(&log, "b: %v %v", err, b.WithResource(pods).Reserved())
	note(&log, "after release: %v", a.WithResource(cms).Reserved())

	// client-go's
	_, err = kcache.NewInformerName("")
	note(&want, "empty: %v", err)
	ka, err := kcache.NewInformerName("scheduler")
	note(&want, "a: %v %q", err, ka.Name())
	_, err = kcache.NewInformerName("scheduler")
	note(&want, "again: %v", err)
	kp1, kp2, kc1 := ka.WithResource(pods), ka.WithResource(pods), ka.WithResource(cms)
	note(&want, "reserved: %v %v %v %q %v", kp1.Reserved(), kp2.Reserved(), kc1.Reserved(), kp1.Name(), kp1.GroupVersionResource())
	var knil *kcache.InformerName
	kn := knil.WithResource(pods)
	note(&want, "nil: %v %q %q", kn.Reserved(), kn.Name(), knil.Name())
	ka.Release()
	note(&want, "released: %v %v", kp1.Reserved(), kc1.Reserved())
	kb, err := kcache.NewInformerName("scheduler")
	note(&want, "b: %v %v", err, kb.WithResource(pods).Reserved())
	note(&want, "after release: %v", ka.WithResource(cms).Reserved())

	require.Equal(t, want, log)
}

// TestIdentifierNamesTheInformer: with no Name, the identifier's resource
// is informer.name.
func TestIdentifierNamesTheInformer(t *testing.T) {
	inf := NewSharedIndexInformerWithOptions(nil, nil, SharedIndexInformerOptions{
		Identifier: (*InformerName)(nil).WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}),
	}).(*sharedIndexInformer)
	require.Equal(t, "pods", inf.name)
}

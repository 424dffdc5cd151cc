package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"
)

// WithTransformer against client-go's: the same random Add, Update, Delete
// and Replace calls go to both stores, each with a transformer that stamps
// the object and counts its calls, and one that sometimes fails. The
// contents, the transformer's calls and the errors must match.
func TestWithTransformerMatchesClientGo(t *testing.T) {
	type side struct {
		calls []string
		store interface {
			Add(any) error
			Update(any) error
			Delete(any) error
			Replace([]any, string) error
			List() []any
		}
	}
	transform := func(s *side) func(any) (any, error) {
		return func(obj any) (any, error) {
			p := obj.(*corev1.Pod)
			s.calls = append(s.calls, p.Name)
			if p.Labels["bad"] == "yes" {
				return nil, errors.New("the transformer refused " + p.Name)
			}
			c := p.DeepCopy()
			c.Annotations = map[string]string{"transformed": "yes"}
			c.ManagedFields = nil
			return c, nil
		}
	}
	ours, theirs := &side{}, &side{}
	ours.store = NewStore(MetaNamespaceKeyFunc, WithTransformer(transform(ours)))
	theirs.store = kcache.NewStore(kcache.MetaNamespaceKeyFunc, kcache.WithTransformer(transform(theirs)))

	r := rand.New(rand.NewPCG(11, 0))
	pod := func() *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", r.IntN(8)), ResourceVersion: fmt.Sprint(r.IntN(1000))}}
		if r.IntN(10) == 0 {
			p.Labels = map[string]string{"bad": "yes"}
		}
		return p
	}
	contents := func(objs []any) []string {
		out := make([]string, 0, len(objs))
		for _, o := range objs {
			p := o.(*corev1.Pod)
			out = append(out, p.Name+"@"+p.ResourceVersion+" "+p.Annotations["transformed"])
		}
		slices.Sort(out)
		return out
	}
	for i := range 2000 {
		var errOurs, errTheirs error
		switch op := r.IntN(4); op {
		case 0:
			p := pod()
			errOurs, errTheirs = ours.store.Add(p), theirs.store.Add(p)
		case 1:
			p := pod()
			errOurs, errTheirs = ours.store.Update(p), theirs.store.Update(p)
		case 2:
			p := pod()
			errOurs, errTheirs = ours.store.Delete(p), theirs.store.Delete(p)
		case 3:
			var list []any
			for range r.IntN(4) {
				list = append(list, pod())
			}
			errOurs, errTheirs = ours.store.Replace(slices.Clone(list), "9"), theirs.store.Replace(slices.Clone(list), "9")
		}
		require.Equal(t, errTheirs == nil, errOurs == nil, "op %d: errors differ: ours %v, client-go's %v", i, errOurs, errTheirs)
		if errTheirs != nil {
			assert.Equal(t, errTheirs.Error(), errOurs.Error(), "op %d", i)
		}
		require.Equal(t, theirs.calls, ours.calls, "op %d: the transformer was called differently", i)
		require.Equal(t, contents(theirs.store.List()), contents(ours.store.List()), "op %d", i)
	}
}

//go:build workshop

package burst

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	srv := kit.StartServer(t)
	spans := kit.NewSpans()
	c := kit.NewController("pods", spans, 500*time.Millisecond)
	kit.StartDropinInformer(t, srv, spans, c.Handler())
	c.Run(t)
	p := kit.CreatePods(t, srv, "web", 1)[0]
	kit.WaitFor(t, "the first reconcile to begin", func() bool { return c.Stats().Processing == 1 })
	for i := range 10 {
		p = p.DeepCopy()
		p.Labels = map[string]string{"v": fmt.Sprint(i)}
		obj, err := srv.Update(p)
		if err != nil {
			t.Fatal(err)
		}
		p = obj.(*corev1.Pod)
	}
	key := p.Namespace + "/" + p.Name
	kit.WaitFor(t, "every update at the controller and the queue idle", func() bool {
		st := c.Stats()
		return st.Adds == 11 && st.Depth == 0 && st.Processing == 0
	})
	if got := c.Reconciles(key); Reconciles != got {
		t.Errorf("Reconciles: you predicted %d, not what the worker did; see hint 1", Reconciles)
	}
	if got := int(c.Stats().Merged); Merged != got {
		t.Errorf("Merged: you predicted %d, not what the traced queue counted; see hint 2", Merged)
	}
}

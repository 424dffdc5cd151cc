//go:build workshop

package burst

import (
	"testing"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	c, key := kit.Burst(t, kit.NewSpans())
	if got := c.Reconciles(key); Reconciles != got {
		t.Errorf("Reconciles: you predicted %d, not what the worker did; see hint 1", Reconciles)
	}
	if got := int(c.Stats().Merged); Merged != got {
		t.Errorf("Merged: you predicted %d, not what the traced queue counted; see hint 2", Merged)
	}
}

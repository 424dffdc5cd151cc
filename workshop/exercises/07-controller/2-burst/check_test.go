//go:build workshop

package burst

import (
	"testing"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit/ctrlkit"
)

func TestPredictions(t *testing.T) {
	c, key := ctrlkit.Burst(t, kit.NewSpans())
	// One message for both: two counts named one by one would be found
	// by counting up.
	if Reconciles != c.Reconciles(key) || Merged != int(c.Stats().Merged) {
		t.Errorf("your counts are not what the worker did and the traced queue counted: follow the key through the dirty and processing sets, update by update (hints 1 and 2)")
	}
}

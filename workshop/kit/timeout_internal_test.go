package kit

import (
	"testing"
	"time"
)

// The kit's limits are shares of the runner's WORKSHOP_TIMEOUT when it is
// set (a third for a call, two thirds for initialising), and their
// defaults when it is not, or does not parse as a positive duration.
func TestTimeoutSharesFollowTheRunnersSetting(t *testing.T) {
	for _, c := range []struct {
		env        string
		call, init time.Duration
	}{
		{"", 10 * time.Second, 20 * time.Second},
		{"1m", 20 * time.Second, 40 * time.Second},
		{"6s", 2 * time.Second, 4 * time.Second},
		{"soon", 10 * time.Second, 20 * time.Second},
		{"-30s", 10 * time.Second, 20 * time.Second},
		{"0", 10 * time.Second, 20 * time.Second},
	} {
		t.Setenv(TimeoutEnv, c.env)
		if got := timeoutShare(10*time.Second, 1, 3); got != c.call {
			t.Errorf("WORKSHOP_TIMEOUT=%q: call limit %v, want %v", c.env, got, c.call)
		}
		if got := timeoutShare(20*time.Second, 2, 3); got != c.init {
			t.Errorf("WORKSHOP_TIMEOUT=%q: initialising limit %v, want %v", c.env, got, c.init)
		}
	}
}

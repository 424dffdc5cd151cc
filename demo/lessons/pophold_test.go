package lessons

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reflectorAt is an informer whose reflector is at a resourceVersion the
// test sets.
type reflectorAt struct{ rv atomic.Value }

func (r *reflectorAt) LastSyncResourceVersion() string { s, _ := r.rv.Load().(string); return s }

// The hold lets the first pop through only once the lesson's hook has
// written and the reflector has reached its last write; later pops go
// through at once. Its limit counts from the write: however long the
// initial state and the hook take, the hold waits for them.
func TestPopHoldWaitsForTheWritesToBeQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf := &reflectorAt{}
		inf.rv.Store("5")
		h := newPopHold(time.Minute)
		h.inf = inf
		var returned atomic.Bool
		go func() { h.beforePop(context.Background()); returned.Store(true) }()
		time.Sleep(2 * time.Minute)
		assert.False(t, returned.Load(), "held before the hook has written, past the limit")
		h.write(func() (string, error) { return "9", nil })()
		time.Sleep(time.Second)
		assert.False(t, returned.Load(), "held while the reflector is behind the last write")
		inf.rv.Store("9")
		time.Sleep(time.Second)
		assert.True(t, returned.Load())
		assert.NoError(t, h.err)
		start := time.Now()
		h.beforePop(context.Background())
		assert.Zero(t, time.Since(start), "a later pop is not held")
	})
}

// It lets go without waiting when the hook wrote nothing or failed, and
// when the informer stops; after its limit it lets go with an error that
// says what happened.
func TestPopHoldLetsGo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hook    func() (string, error)
		stop    bool
		holds   time.Duration
		wantErr string
	}{
		{"nothing written", func() (string, error) { return "", nil }, false, 0, ""},
		{"the hook failed", func() (string, error) { return "9", errors.New("refused") }, false, 0, ""},
		{"the informer stopped", func() (string, error) { return "9", nil }, true, 0, ""},
		{"the writes never came", func() (string, error) { return "9", nil }, false, time.Minute, `the last of them (resourceVersion 9) was still not in its queue (its reflector was at "5")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inf := &reflectorAt{}
				inf.rv.Store("5")
				h := newPopHold(time.Minute)
				h.inf = inf
				h.write(tc.hook)()
				ctx, cancel := context.WithCancel(context.Background())
				if tc.stop {
					cancel()
				}
				defer cancel()
				start := time.Now()
				h.beforePop(ctx)
				// Fake time: the hold polls every 5ms.
				held := time.Since(start)
				assert.True(t, held >= tc.holds && held <= tc.holds+5*time.Millisecond, "held %v, want %v", held, tc.holds)
				if tc.wantErr == "" {
					require.NoError(t, h.err)
				} else {
					require.ErrorContains(t, h.err, tc.wantErr)
				}
			})
		})
	}
}

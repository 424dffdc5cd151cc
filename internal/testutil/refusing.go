package testutil

import (
	"context"
	"errors"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// RefusingListerWatcher is an API server that refuses every LIST and WATCH,
// and records when each came, so that a test can read a reflector's pacing
// from the gaps: with nothing ever served, every retry waits a full backoff.
// It has the methods of client-go's cache.ListerWatcher and
// ListerWatcherWithContext (k8s.io/client-go/tools/cache, listwatch.go),
// so it serves client-go's reflector and the chapters' alike; the zero
// value is ready.
//
// Ours: a test helper. Read its times in a testing/synctest bubble, where
// they are the fake clock's and the gaps exact.
type RefusingListerWatcher struct {
	mu sync.Mutex
	at []time.Time
}

func (l *RefusingListerWatcher) refuse() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, time.Now())
	return errors.New("refused")
}

// List refuses, and records the time.
func (l *RefusingListerWatcher) List(metav1.ListOptions) (runtime.Object, error) {
	return nil, l.refuse()
}

// ListWithContext refuses, and records the time.
func (l *RefusingListerWatcher) ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return nil, l.refuse()
}

// Watch refuses, and records the time.
func (l *RefusingListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	return nil, l.refuse()
}

// WatchWithContext refuses, and records the time.
func (l *RefusingListerWatcher) WatchWithContext(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, l.refuse()
}

// Gaps returns the time between each request and the one before it,
// leaving out gaps of zero: a reflector that finds its streamed start
// refused LISTs at once, in the same attempt, so only the gaps between
// attempts are its backoff.
func (l *RefusingListerWatcher) Gaps() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(l.at); i++ {
		if d := l.at[i].Sub(l.at[i-1]); d > 0 {
			gaps = append(gaps, d)
		}
	}
	return gaps
}

// RunFor runs run in a goroutine for d, then cancels its context and waits
// for it to return. In a testing/synctest bubble d passes in fake time, at
// once; the wait for the return is what keeps a goroutine of run from
// outliving the bubble, which would fail the test.
//
// Ours: a test helper.
func RunFor(d time.Duration, run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); run(ctx) }()
	time.Sleep(d)
	cancel()
	<-done
}

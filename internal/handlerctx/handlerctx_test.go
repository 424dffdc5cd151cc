package handlerctx

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
)

func sc(n byte) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{n}, SpanID: trace.SpanID{n}, TraceFlags: trace.FlagsSampled})
}

func TestNothingRegisteredByDefault(t *testing.T) {
	_, ok := Current()
	require.False(t, ok)
}

func TestEnterIsPerGoroutineAndNests(t *testing.T) {
	exit := Enter(sc(1))
	got, ok := Current()
	require.True(t, ok)
	require.Equal(t, sc(1), got)

	inner := Enter(sc(2))
	got, _ = Current()
	require.Equal(t, sc(2), got)

	// Another goroutine sees nothing of this one's.
	var other bool
	done := make(chan struct{})
	go func() { defer close(done); _, other = Current() }()
	<-done
	require.False(t, other)

	inner()
	inner() // a second exit is harmless
	got, _ = Current()
	require.Equal(t, sc(1), got, "exit puts back the outer registration")
	exit()
	_, ok = Current()
	require.False(t, ok)
	require.Zero(t, Active())
}

func TestExitFromAnotherGoroutine(t *testing.T) {
	exit := Enter(sc(3))
	done := make(chan struct{})
	go func() { defer close(done); exit() }()
	<-done
	_, ok := Current()
	require.False(t, ok, "the registration is the entering goroutine's, whoever ends it")
	require.Zero(t, Active())
}

func TestManyGoroutinesEachSeeTheirOwn(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 64 {
		wg.Go(func() {
			want := sc(byte(i + 1))
			exit := Enter(want)
			defer exit()
			for range 100 {
				if got, ok := Current(); !ok || !got.Equal(want) {
					errs <- "goroutine saw another's span context"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	require.Zero(t, Active())
}

func BenchmarkCurrentWithNothingRegistered(b *testing.B) {
	for b.Loop() {
		Current()
	}
}

// TestExitsOutOfOrder: a worker that took two keys may finish the first
// one first. Ending the older registration must leave the newer one
// current, and ending both must leave nothing behind, even while another
// goroutine keeps the registry active.
func TestExitsOutOfOrder(t *testing.T) {
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		exit := Enter(sc(9))
		close(held)
		<-release
		exit()
	}()
	<-held

	first := Enter(sc(1))
	second := Enter(sc(2))
	first()
	got, ok := Current()
	require.True(t, ok)
	require.Equal(t, sc(2), got, "the newer registration is still in force")
	second()
	_, ok = Current()
	require.False(t, ok, "nothing of this goroutine's is left, though another's is")
	require.EqualValues(t, 1, Active())

	close(release)
	<-done
	require.Zero(t, Active())
}

// TestUntracedRegistration: Enter with an invalid span context registers
// an untraced call; Untraced tells it from a traced one and from nothing.
func TestUntracedRegistration(t *testing.T) {
	_, untraced := Untraced()
	require.False(t, untraced, "nothing registered")
	exit := Enter(trace.SpanContext{})
	got, ok := Current()
	require.True(t, ok)
	require.False(t, got.IsValid())
	_, untraced = Untraced()
	require.True(t, untraced)
	inner := Enter(sc(1))
	parent, untraced := Untraced()
	require.False(t, untraced, "a traced call inside is current")
	require.Equal(t, sc(1), parent)
	inner()
	exit()
	require.Zero(t, Active())
}

// TestUnsampledRegistrationIsUntraced: a valid span context whose sampled
// flag is off (a reconcile of a change whose trace was dropped) is
// untraced as the invalid one is, and Current still returns it, so that
// what the reconcile starts under it is dropped too.
func TestUnsampledRegistrationIsUntraced(t *testing.T) {
	u := Unsampled()
	require.True(t, u.IsValid())
	require.False(t, u.IsSampled())
	require.NotEqual(t, u.TraceID(), Unsampled().TraceID(), "each a trace of its own")
	tok := Register(u)
	parent, untraced := Untraced()
	require.True(t, untraced)
	require.Equal(t, u, parent)
	got, ok := Current()
	require.True(t, ok)
	require.Equal(t, u, got)
	tok.Exit()
	tok.Exit()
	var zero Token
	zero.Exit()
	require.Zero(t, Active())
}

func BenchmarkRegisterCurrentExit(b *testing.B) {
	for b.Loop() {
		tok := Register(sc(1))
		Current()
		tok.Exit()
	}
}

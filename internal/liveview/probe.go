package liveview

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
)

// ReflectorProbe wraps the ListerWatcher an informer is built with, to show
// what its reflector is doing: a LIST in flight, a WATCH open (and from which
// resourceVersion, up to which), or neither (backing off, or stopped). It
// sees the reflector's own requests, so a relist after a 410 shows as a new
// LIST, a dropped watch as a new WATCH.
//
// Chapter 3's Reflector has no accessor for this (nor has client-go's), and
// a live view must not reach into it; wrapping its ListerWatcher is how a
// user could watch it too.
type ReflectorProbe struct {
	lw reflector.ListerWatcherWithContext

	mu sync.Mutex
	// Guarded by mu:
	st   ReflectorState
	sent int // requests logged so far
}

// ReflectorState is the reflector part of a [Pipeline].
type ReflectorState struct {
	// Phase is LIST, WATCH or idle.
	Phase string `json:"phase"`
	// ResourceVersion: of the LIST being made (as asked) or answered; of
	// the last event the open WATCH delivered (or the one it started from).
	ResourceVersion string `json:"rv"`
	// Lists and Watches count the requests made; WatchEvents the events
	// delivered by every watch.
	Lists       int `json:"lists"`
	Watches     int `json:"watches"`
	WatchEvents int `json:"watchEvents"`
	// WatchErrors counts ERROR events (a 410 Expired above all): each ends
	// the watch, and the reflector LISTs again.
	WatchErrors int `json:"watchErrors"`
	// LastError is the last failed request's, until one succeeds.
	LastError string `json:"lastError,omitempty"`
	// Requests are the last [RecentRequests] requests, oldest first: what
	// a counter cannot say, which request followed which, and from where.
	Requests []ProbedRequest `json:"requests,omitempty"`
}

// RecentRequests is how many requests a [ReflectorState] lists.
const RecentRequests = 8

// ProbedRequest is one LIST or WATCH the reflector sent.
type ProbedRequest struct {
	Verb string `json:"verb"` // LIST or WATCH
	// ResourceVersion is the one asked for ("" for a consistent read).
	ResourceVersion string `json:"rv"`
	// Outcome is "" until the request failed, or a watch ended with an
	// ERROR event (then "ERROR" and the status's reason, e.g. "ERROR Expired").
	Outcome string `json:"outcome,omitempty"`
}

var _ reflector.ListerWatcherWithContext = &ReflectorProbe{}

// NewReflectorProbe wraps lw.
func NewReflectorProbe(lw reflector.ListerWatcher) *ReflectorProbe {
	return &ReflectorProbe{lw: reflector.ToListerWatcherWithContext(lw), st: ReflectorState{Phase: "idle"}}
}

// State is the reflector's state now.
func (p *ReflectorProbe) State() ReflectorState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.st
	st.Requests = slices.Clone(st.Requests)
	return st
}

func (p *ReflectorProbe) set(f func(*ReflectorState)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.st)
}

// request_locked logs a new request and returns its number, for
// outcome_locked.
func (p *ReflectorProbe) request_locked(verb, rv string) int {
	if len(p.st.Requests) == RecentRequests {
		p.st.Requests = slices.Delete(p.st.Requests, 0, 1)
	}
	p.st.Requests = append(p.st.Requests, ProbedRequest{Verb: verb, ResourceVersion: rv})
	p.sent++
	return p.sent
}

// outcome_locked sets the outcome of request n, if it is still logged.
func (p *ReflectorProbe) outcome_locked(n int, outcome string) {
	if i := len(p.st.Requests) - 1 - (p.sent - n); i >= 0 {
		p.st.Requests[i].Outcome = outcome
	}
}

// List passes to ListWithContext.
func (p *ReflectorProbe) List(o metav1.ListOptions) (runtime.Object, error) {
	return p.ListWithContext(context.Background(), o)
}

// Watch passes to WatchWithContext.
func (p *ReflectorProbe) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return p.WatchWithContext(context.Background(), o)
}

// ListWithContext records a LIST while it is in flight.
func (p *ReflectorProbe) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	var n int
	p.set(func(s *ReflectorState) {
		s.Phase, s.ResourceVersion = "LIST", o.ResourceVersion
		s.Lists++
		n = p.request_locked("LIST", o.ResourceVersion)
	})
	obj, err := p.lw.ListWithContext(ctx, o)
	p.set(func(s *ReflectorState) {
		s.Phase = "idle"
		if err != nil {
			s.LastError = "LIST: " + err.Error()
			p.outcome_locked(n, err.Error())
			return
		}
		s.LastError = ""
		if l, lerr := meta.ListAccessor(obj); lerr == nil {
			s.ResourceVersion = l.GetResourceVersion()
		}
	})
	return obj, err
}

// WatchWithContext records a WATCH while it is open, and each event's
// resourceVersion.
func (p *ReflectorProbe) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	var n int
	p.set(func(*ReflectorState) { n = p.request_locked("WATCH", o.ResourceVersion) })
	w, err := p.lw.WatchWithContext(ctx, o)
	if err != nil {
		p.set(func(s *ReflectorState) {
			s.Phase, s.LastError = "idle", "WATCH: "+err.Error()
			p.outcome_locked(n, err.Error())
		})
		return nil, err
	}
	p.set(func(s *ReflectorState) {
		s.Phase, s.ResourceVersion, s.LastError = "WATCH", o.ResourceVersion, ""
		s.Watches++
	})
	pw := &probedWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), n: n}
	go pw.relay(p)
	return pw, nil
}

// probedWatch relays a watch's events, noting each in the probe.
type probedWatch struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	n        int // the request's number in the probe's log
}

func (w *probedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *probedWatch) Stop() {
	w.stopOnce.Do(func() { close(w.stop); w.inner.Stop() })
}

// relay ends when the inner watch closes or Stop is called (the reflector
// stops reading after Stop, so a pending send must not block forever).
func (w *probedWatch) relay(p *ReflectorProbe) {
	defer close(w.out)
	defer p.set(func(s *ReflectorState) {
		if s.Phase == "WATCH" {
			s.Phase = "idle"
		}
	})
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				return
			}
			if ev.Type == watch.Error {
				outcome := "ERROR"
				if st, ok := ev.Object.(*metav1.Status); ok && st.Reason != "" {
					outcome += " " + string(st.Reason)
				}
				p.set(func(s *ReflectorState) { s.WatchErrors++; p.outcome_locked(w.n, outcome) })
			} else if m, err := meta.Accessor(ev.Object); err == nil {
				rv := m.GetResourceVersion()
				p.set(func(s *ReflectorState) { s.WatchEvents++; s.ResourceVersion = rv })
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		}
	}
}

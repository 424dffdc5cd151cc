package liveprobe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// ReflectorProbe wraps the ListerWatcher an informer is built with, to show
// what its reflector is doing: a stream in flight (the WATCH with
// sendInitialEvents=true that fetches the initial state: how many objects it
// has sent, and the bookmark that ended it), a LIST in flight, a WATCH open
// (and from which resourceVersion, up to which), or neither (backing off, or
// stopped). It sees the reflector's own requests, so a relist after a 410
// shows as a new stream, a dropped watch as a new WATCH, and a server that
// cannot stream as a refused stream followed by a LIST.
//
// Chapter 3's Reflector has no accessor for this (nor has client-go's), and
// a live view must not reach into it; wrapping its ListerWatcher is how a
// user could watch it too.
type ReflectorProbe struct {
	lw reflector.ListerWatcherWithContext
	// probeEvents, if set, says at each WATCH whether to relay its events
	// through the probe (nil: always). A relay costs a goroutine hop per
	// event; dropin turns it on only once a live view exists.
	probeEvents func() bool
	// unsupported is the wrapped ListerWatcher's own answer to
	// reflector.DoesClientNotSupportWatchListSemantics: asked once, of the
	// ListerWatcher as given, because the WithContext adapter does not
	// carry the method.
	unsupported bool
	// streams, if set (CacheBytes.Follow, before the reflector runs), is
	// told when a probed stream's initial state starts coming (true) and
	// when the reflector is past the Replace that follows its bookmark
	// (false): it has read the next event, or the watch ended.
	streams func(open bool)

	mu sync.Mutex
	// Guarded by mu:
	st   ReflectorState
	sent int // requests logged so far
	// lastEvent is when the last watch event arrived (the stream's
	// objects and bookmarks included); idleSince when the phase last
	// turned idle (a backoff, after a failed request). Kept out of
	// ReflectorState, which a test compares whole.
	lastEvent, idleSince time.Time
	// relist is the last relist; cause what ended the last watch (or
	// request) since, which the next relist gives as its reason.
	relist    Relist
	relisting bool
	cause     string
}

// Relist is what the probe saw of the reflector's last relist: a fetch of
// the whole state (a STREAM, or a LIST with its pages, and the requests
// that failed and were retried on the way) from its first request to the
// last page or the stream's initial-events-end bookmark. It does not
// include the cache's Replace that follows.
type Relist struct {
	// Reason is why it began: "start" (the reflector's first), the status
	// that ended the watch before it ("410 Expired", "410 Gone": the
	// resourceVersion was too old), or "watch error: " and what else
	// ended it.
	Reason string `json:"reason"`
	// Started is when its first request was sent; Ended when the whole
	// state was in (zero while it is still being fetched, or when its end
	// was not seen: a stream sent before the live view existed).
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// EndUnseen: its stream was sent before events were relayed through
	// the probe (a dropin informer's, before the live view existed), so
	// its bookmark, its objects and its end cannot be seen.
	EndUnseen bool `json:"endUnseen,omitempty"`
	// Objects is how many objects it fetched (so far; a retried request
	// counts from 0 again).
	Objects int `json:"objects"`
	// PeakHeap is the largest heap [ReflectorProbe.NoteHeap] was told of
	// while it ran (0: none was: the relist took less than a sample's
	// interval).
	PeakHeap uint64 `json:"peakHeap,omitempty"`
}

// LastRelist is the last relist, and whether there has been one.
func (p *ReflectorProbe) LastRelist() (Relist, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.relist, !p.relist.Started.IsZero()
}

// NoteHeap tells the probe the process's heap now: the largest told
// during a relist is its peak. (Both live views, dropin's and the demo's,
// tell it [ReadHeap] once a second.)
func (p *ReflectorProbe) NoteHeap(bytes uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.relisting && bytes > p.relist.PeakHeap {
		p.relist.PeakHeap = bytes
	}
}

// beginRelist_locked starts a relist unless one is under way.
func (p *ReflectorProbe) beginRelist_locked() {
	if p.relisting {
		return
	}
	reason := p.cause
	switch {
	case p.relist.Started.IsZero():
		reason = "start"
	case reason == "":
		reason = "watch error: the watch ended"
	}
	p.relist, p.relisting, p.cause = Relist{Reason: reason, Started: time.Now()}, true, ""
}

// endRelist_locked: the whole state is in.
func (p *ReflectorProbe) endRelist_locked() {
	if p.relisting {
		p.relist.Ended, p.relisting = time.Now(), false
	}
}

// causeOf is the reason a relist after outcome gives.
func causeOf(outcome string) string {
	switch {
	case strings.HasPrefix(outcome, "410 "):
		return outcome
	case outcome == "ERROR Expired", outcome == "ERROR Gone":
		return "410 " + strings.TrimPrefix(outcome, "ERROR ")
	}
	return "watch error: " + outcome
}

// ReflectorState is the reflector part of a [Pipeline].
type ReflectorState struct {
	// Phase is STREAM (a streaming WATCH still sending the initial state),
	// LIST, WATCH (a watch delivering changes: a plain one, or a stream
	// past its initial-events-end bookmark) or idle.
	Phase string `json:"phase"`
	// ResourceVersion: of the request being made (as asked); of the LIST's
	// answer; of the bookmark that ended a stream's initial state; of the
	// last event the open WATCH delivered.
	ResourceVersion string `json:"rv"`
	// Streams, Lists and Watches count the requests sent, refused or not:
	// streaming WATCHes (sendInitialEvents=true, the informer's first
	// request since client-go 1.35), LISTs (one per page), and plain
	// WATCHes that resume from a resourceVersion. A stream goes on as the
	// watch once its initial state is in: it is not counted again.
	Streams int `json:"streams"`
	Lists   int `json:"lists"`
	Watches int `json:"watches"`
	// Streamed is how many objects the current (or last) stream has sent
	// before its initial-events-end bookmark; Bookmark is that bookmark's
	// resourceVersion, "" until a stream got one.
	Streamed int    `json:"streamed"`
	Bookmark string `json:"bookmark,omitempty"`
	// Fetched says how the reflector last got the whole state: "stream"
	// (a stream reached its bookmark) or "list" (a LIST returned its last
	// page, Listed objects in that page); "" before either.
	Fetched string `json:"fetched,omitempty"`
	Listed  int    `json:"listed"`
	// WatchEvents counts the events delivered by every watch after the
	// initial state: changes and bookmarks, not the streamed objects.
	WatchEvents int `json:"watchEvents"`
	// WatchErrors counts ERROR events (a 410 Expired above all): each ends
	// the watch, and the reflector fetches the whole state again.
	WatchErrors int `json:"watchErrors"`
	// Unprobed: the open WATCH's events are not relayed through the
	// probe (a dropin informer's, while no live view exists): its events,
	// stream count, bookmark and end are not seen, only its request.
	Unprobed bool `json:"unprobed,omitempty"`
	// LastError is the last failed request's, until one succeeds.
	LastError string `json:"lastError,omitempty"`
	// Requests are the last [RecentRequests] requests, oldest first: what
	// a counter cannot say, which request followed which, and from where.
	Requests []ProbedRequest `json:"requests,omitempty"`
}

// RecentRequests is how many requests a [ReflectorState] lists.
const RecentRequests = 8

// The verbs of a [ProbedRequest] and the phases of a [ReflectorState].
const (
	// VerbStream is a WATCH with sendInitialEvents=true: the server sends
	// the whole state as ADDED events, then a bookmark annotated
	// k8s.io/initial-events-end, then the changes, on the same connection.
	VerbStream = "STREAM"
	VerbList   = "LIST"
	VerbWatch  = "WATCH"
	PhaseIdle  = "idle"
)

// ProbedRequest is one request the reflector sent.
type ProbedRequest struct {
	Verb string `json:"verb"` // STREAM, LIST or WATCH
	// ResourceVersion is the one asked for ("" for the latest state).
	ResourceVersion string `json:"rv"`
	// Objects: for a STREAM, the objects it sent before its bookmark (so
	// far, while it streams); for a LIST, the objects in its answer.
	Objects int `json:"objects"`
	// Bookmark is, for a STREAM, the resourceVersion of the
	// initial-events-end bookmark that completed its initial state; ""
	// while it streams, or when it ended without one.
	Bookmark string `json:"bookmark,omitempty"`
	// Outcome is "" until the request failed (a status error as its code
	// and reason, e.g. "422 Invalid" from a server that cannot stream; any
	// other error as its text), a watch ended with an ERROR event (then
	// "ERROR" and the status's reason, e.g. "ERROR Expired"), or a stream
	// closed before its bookmark.
	Outcome string `json:"outcome,omitempty"`
}

// String is the request as the page's reflector box lists it: the verb, the
// resourceVersion asked for ("the latest" for ""), then what came of it,
// e.g. "STREAM from the latest · 3 objects · bookmark rv 17",
// "STREAM from 17 · 422 Invalid", "LIST from 17 · 3 objects",
// "WATCH from 20 · ERROR Expired". (app.js draws the same line.)
func (r ProbedRequest) String() string {
	from := r.ResourceVersion
	if from == "" {
		from = "the latest"
	}
	parts := []string{r.Verb + " from " + from}
	objects := fmt.Sprintf("%d object", r.Objects)
	if r.Objects != 1 {
		objects += "s"
	}
	switch {
	case r.Verb == VerbStream && r.Outcome == "" && r.Bookmark != "":
		parts = append(parts, objects, "bookmark rv "+r.Bookmark)
	case r.Verb == VerbStream && r.Outcome == "":
		parts = append(parts, objects+" so far…")
	case r.Verb == VerbStream && r.Objects > 0: // then cut, or ended by an ERROR event
		parts = append(parts, objects)
	case r.Verb == VerbList && r.Outcome == "":
		parts = append(parts, objects)
	}
	if r.Outcome != "" {
		parts = append(parts, r.Outcome)
	}
	return strings.Join(parts, " · ")
}

// The values of [ReflectorState].Fetched.
const (
	FetchedStream = "stream"
	FetchedList   = "list"
)

// OutcomeConnectionRefused is the outcome of a request sent while the API
// server is down.
const OutcomeConnectionRefused = "connection refused"

// OutcomeClosedEarly is the outcome of a stream whose connection closed
// before the initial-events-end bookmark: the reflector streams again.
const OutcomeClosedEarly = "closed before its bookmark"

var _ reflector.ListerWatcherWithContext = &ReflectorProbe{}

// NewReflectorProbe wraps lw.
func NewReflectorProbe(lw reflector.ListerWatcher) *ReflectorProbe {
	return &ReflectorProbe{
		lw:          reflector.ToListerWatcherWithContext(lw),
		unsupported: reflector.DoesClientNotSupportWatchListSemantics(lw),
		st:          ReflectorState{Phase: PhaseIdle},
	}
}

// NewLazyReflectorProbe wraps lw as [NewReflectorProbe] does, but relays
// a WATCH's events only when probeEvents says so as the WATCH is sent:
// until then every request is still logged, at no cost per event.
func NewLazyReflectorProbe(lw reflector.ListerWatcher, probeEvents func() bool) *ReflectorProbe {
	p := NewReflectorProbe(lw)
	p.probeEvents = probeEvents
	return p
}

// IsWatchListSemanticsUnSupported passes on the wrapped ListerWatcher's
// opt-out: a reflector asks its ListerWatcher whether it can stream
// (reflector.DoesClientNotSupportWatchListSemantics), and without this
// method the probe would answer "yes" for one that said "no", changing the
// very conversation it is there to show.
func (p *ReflectorProbe) IsWatchListSemanticsUnSupported() bool { return p.unsupported }

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
	was := p.st.Phase
	f(&p.st)
	if p.st.Phase == PhaseIdle && was != PhaseIdle {
		p.idleSince = time.Now()
	}
}

// Times says when the last watch event arrived and since when the
// reflector has been idle (zero: never, or not idle now): "idle" after a
// failed request is the reflector's backoff before the next one.
func (p *ReflectorProbe) Times() (lastEvent, idleSince time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st.Phase != PhaseIdle {
		return p.lastEvent, time.Time{}
	}
	return p.lastEvent, p.idleSince
}

// request_locked logs a new request and returns its number, for
// logged_locked.
func (p *ReflectorProbe) request_locked(verb, rv string) int {
	if len(p.st.Requests) == RecentRequests {
		p.st.Requests = slices.Delete(p.st.Requests, 0, 1)
	}
	p.st.Requests = append(p.st.Requests, ProbedRequest{Verb: verb, ResourceVersion: rv})
	p.sent++
	return p.sent
}

// logged_locked returns request n's entry, or nil when it has left the log.
func (p *ReflectorProbe) logged_locked(n int) *ProbedRequest {
	if i := len(p.st.Requests) - 1 - (p.sent - n); i >= 0 {
		return &p.st.Requests[i]
	}
	return nil
}

// outcome_locked sets the outcome of request n, if it is still logged.
func (p *ReflectorProbe) outcome_locked(n int, outcome string) {
	if r := p.logged_locked(n); r != nil {
		r.Outcome = outcome
	}
}

// outcomeOf names a failed request's error: an API status by its code and
// reason ("422 Invalid", "403 Forbidden"), which is what a reader compares
// with the API server's log; a refused connection as such (its full text
// names the URL, which the request's line already says); anything else by
// its text.
func outcomeOf(err error) string {
	if utilnet.IsConnectionRefused(err) {
		return OutcomeConnectionRefused
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code != 0 {
		s := st.Status()
		return strings.TrimSpace(fmt.Sprintf("%d %s", s.Code, tracing.Value(string(s.Reason))))
	}
	return errorText(err)
}

// errorText is err's message as the page may show it: an API server's
// message can quote what it refused, so it is made safe and bounded as
// a span's error is (tracing.Cut, at tracing.MaxMessageBytes).
func errorText(err error) string { return tracing.Cut(err.Error(), tracing.MaxMessageBytes) }

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
		s.Phase, s.ResourceVersion, s.Unprobed = VerbList, tracing.Value(o.ResourceVersion), false
		s.Lists++
		n = p.request_locked(VerbList, s.ResourceVersion)
		if o.Continue == "" {
			p.beginRelist_locked()
			p.relist.Objects = 0 // a retry fetches it all again
		}
	})
	obj, err := p.lw.ListWithContext(ctx, o)
	p.set(func(s *ReflectorState) {
		s.Phase = PhaseIdle
		if err != nil {
			s.LastError = "LIST: " + errorText(err)
			p.outcome_locked(n, outcomeOf(err))
			return
		}
		s.LastError = ""
		objects := meta.LenList(obj)
		p.relist.Objects += objects
		if l, lerr := meta.ListAccessor(obj); lerr == nil {
			s.ResourceVersion = tracing.Value(l.GetResourceVersion())
			if l.GetContinue() == "" {
				s.Fetched, s.Listed = FetchedList, objects
				p.endRelist_locked()
			}
		}
		if r := p.logged_locked(n); r != nil {
			r.Objects = objects
		}
	})
	return obj, err
}

// WatchWithContext records a WATCH while it is open, and each event's
// resourceVersion; a streaming one (sendInitialEvents=true) is a STREAM
// until its initial-events-end bookmark, counting the objects it sends.
func (p *ReflectorProbe) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	stream := o.SendInitialEvents != nil && *o.SendInitialEvents
	verb := VerbWatch
	if stream {
		verb = VerbStream
	}
	var n int
	p.set(func(s *ReflectorState) {
		n = p.request_locked(verb, tracing.Value(o.ResourceVersion))
		if stream {
			s.Streams++
			p.beginRelist_locked()
			p.relist.Objects = 0 // a retry fetches it all again
		} else {
			s.Watches++
		}
	})
	w, err := p.lw.WatchWithContext(ctx, o)
	if err != nil {
		p.set(func(s *ReflectorState) {
			s.Phase, s.LastError = PhaseIdle, verb+": "+errorText(err)
			p.outcome_locked(n, outcomeOf(err))
			if !stream {
				p.cause = causeOf(outcomeOf(err))
			}
		})
		return nil, err
	}
	unprobed := p.probeEvents != nil && !p.probeEvents()
	p.set(func(s *ReflectorState) {
		s.Phase, s.ResourceVersion, s.LastError, s.Unprobed = verb, tracing.Value(o.ResourceVersion), "", unprobed
		if stream {
			s.Streamed = 0
		}
	})
	if unprobed {
		if stream {
			p.set(func(*ReflectorState) {
				if p.relisting {
					p.relist.EndUnseen, p.relisting = true, false
				}
			})
		}
		return w, nil
	}
	pw := &probedWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), n: n, streaming: stream}
	if stream && p.streams != nil {
		p.streams(true)
		pw.window = p.streams
	}
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
	// streaming: a stream still sending its initial state (only the
	// relay goroutine touches it).
	streaming bool
	// window, if set, is ReflectorProbe.streams, to be told false once the
	// reflector has read an event after the bookmark (closeNext: the
	// bookmark has been read), or the relay ends. Only the relay touches
	// them.
	window    func(open bool)
	closeNext bool
}

func (w *probedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *probedWatch) Stop() {
	w.stopOnce.Do(func() { close(w.stop); w.inner.Stop() })
}

// relay ends when the inner watch closes or Stop is called (the reflector
// stops reading after Stop, so a pending send must not block forever).
func (w *probedWatch) relay(p *ReflectorProbe) {
	defer close(w.out)
	defer func() {
		if w.window != nil {
			w.window(false)
		}
	}()
	defer p.set(func(s *ReflectorState) {
		// Only the latest request says what the reflector does now: a
		// watch whose relay ends after the next request was sent must not
		// turn that one's phase to idle.
		if p.sent == w.n && (s.Phase == VerbWatch || s.Phase == VerbStream) {
			s.Phase = PhaseIdle
		}
	})
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				if w.streaming {
					p.set(func(*ReflectorState) {
						if r := p.logged_locked(w.n); r != nil && r.Outcome == "" {
							r.Outcome = OutcomeClosedEarly
						}
					})
				}
				return
			}
			wasStreaming := w.streaming
			w.note(p, ev)
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
			// The out channel is unbuffered: a send done is an event
			// read. The reflector reads the bookmark, Replaces the
			// store (which transforms the stream's objects again), and
			// only then reads on: so the read after the bookmark's is
			// the Replace done.
			if w.window != nil {
				if w.closeNext {
					w.window(false)
					w.window = nil
				} else if wasStreaming && !w.streaming {
					w.closeNext = true
				}
			}
		}
	}
}

// note records ev in the probe, before the reflector sees it.
func (w *probedWatch) note(p *ReflectorProbe, ev watch.Event) {
	now := time.Now()
	p.set(func(*ReflectorState) { p.lastEvent = now })
	if ev.Type == watch.Error {
		// FromObject reads the Status a typed client decodes and the
		// unstructured one an unstructured client does.
		outcome := "ERROR"
		var st apierrors.APIStatus
		if errors.As(apierrors.FromObject(ev.Object), &st) && st.Status().Reason != "" {
			outcome += " " + tracing.Value(string(st.Status().Reason))
		}
		p.set(func(s *ReflectorState) {
			s.WatchErrors++
			p.outcome_locked(w.n, outcome)
			p.cause = causeOf(outcome)
		})
		return
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return
	}
	// The page shows it: made safe and copied out of the object
	// (tracing.Value), as every value taken from an object is.
	rv := tracing.Value(m.GetResourceVersion())
	if !w.streaming {
		p.set(func(s *ReflectorState) { s.WatchEvents++; s.ResourceVersion = rv })
		return
	}
	// The initial state: ADDED events in no resourceVersion order, so the
	// probe shows the stream's count, not their resourceVersions, until
	// the bookmark says which resourceVersion the whole state is at.
	end := ev.Type == watch.Bookmark && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
	p.set(func(s *ReflectorState) {
		r := p.logged_locked(w.n)
		switch {
		case end:
			s.Phase, s.ResourceVersion, s.Bookmark, s.Fetched = VerbWatch, rv, rv, FetchedStream
			p.endRelist_locked()
			if r != nil {
				r.Bookmark = rv
			}
		case ev.Type == watch.Added:
			s.Streamed++
			p.relist.Objects++
			if r != nil {
				r.Objects++
			}
		}
	})
	w.streaming = !end
}

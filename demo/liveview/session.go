package liveview

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// SessionOptions are what a [Session] is started with.
type SessionOptions struct {
	// Addr is the address to serve on (see [Listen]).
	Addr string
	// TracerProvider is the run's: the session's span store becomes one
	// more of its processors, so the page sees the very spans that are
	// exported.
	TracerProvider *sdktrace.TracerProvider
	// Traces bounds the traces the page keeps (see [NewSpanStore]).
	Traces int
	// SpansDropped is how many spans the run's exporter dropped.
	SpansDropped func() int64
	// NoControls is what the page says where it has no controls ("" for
	// the default).
	NoControls string
	// Warn reports trouble the run survives (a warning for an address off
	// loopback, the server's failure).
	Warn func(format string, args ...any)
	// Stdout gets the page's URL, even in a quiet run: without it the page
	// is lost.
	Stdout io.Writer
}

// Session is one run's live view: the page's server, its span store, and
// the informer it shows once attached (before that the page says the run
// is starting).
type Session struct {
	spans    *SpanStore
	url      string
	stopHTTP context.CancelFunc
	done     chan struct{}

	mu sync.Mutex
	// Guarded by mu:
	informer processor.SharedIndexInformer
	probe    *liveprobe.ReflectorProbe
	bytes    *liveprobe.CacheBytes
	source   string
	name     string
	controls []Control
	none     string
	// sourceNote, if set, adds to source what may change while the page
	// is open (whether the embedded server streams).
	sourceNote func() string
	// workqueue, if set, is a controller's queue row and the listener (by
	// name prefix) whose handler feeds it.
	workqueue func() (listener string, st WorkqueueState, ok bool)
}

// StartSession binds o.Addr, prints the page's URL (and warns of an
// address off loopback) and serves until Stop.
func StartSession(o SessionOptions) (*Session, error) {
	ln, url, warning, err := Listen(o.Addr)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		o.Warn("%s", warning)
	}
	return ServeSession(ln, url, o), nil
}

// ServeSession is StartSession on a listener already bound, whose page is
// at url.
func ServeSession(ln net.Listener, url string, o SessionOptions) *Session {
	s := &Session{spans: NewSpanStore(o.Traces), url: url, done: make(chan struct{}), source: "starting…", none: o.NoControls}
	o.TracerProvider.RegisterSpanProcessor(s.spans)
	srv := NewServer(Options{Pipeline: s.pipeline, Spans: s.spans, Controls: s.controlList, SpansDropped: o.SpansDropped})
	ctx, cancel := context.WithCancel(context.Background())
	s.stopHTTP = cancel
	heapDone := make(chan struct{})
	go func() {
		defer close(heapDone)
		s.noteHeap(ctx)
	}()
	go func() {
		defer close(s.done)
		if err := Serve(ctx, ln, srv); err != nil {
			o.Warn("live view: %v", err)
		}
		<-heapDone
	}()
	fmt.Fprintf(o.Stdout, "live view: %s (Ctrl-C stops)\n", url)
	return s
}

// heapInterval is how often the session tells the attached informer's
// probe the heap (a relist's peak), as dropin's live view does.
const heapInterval = time.Second

// noteHeap tells the attached probe the process's heap once a heapInterval
// until ctx ends: the largest told while a relist runs is its peak
// (liveprobe's NoteHeap, ReadHeap: one runtime/metrics read, no
// stop-the-world).
func (s *Session) noteHeap(ctx context.Context) {
	t := time.NewTicker(heapInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		probe := s.probe
		s.mu.Unlock()
		if probe != nil {
			probe.NoteHeap(liveprobe.ReadHeap())
		}
	}
}

// URL is the page's.
func (s *Session) URL() string { return s.url }

// Spans is the page's span store.
func (s *Session) Spans() *SpanStore { return s.spans }

// Stop stops serving and waits until the server is done.
func (s *Session) Stop() {
	s.stopHTTP()
	<-s.done
}

// Attach shows inf on the page, named name, from source; probe wraps its
// ListerWatcher (informers.For), bytes (nil: none) estimates what its cache
// holds (informers.Spec.Bytes), controls are the page's buttons.
func (s *Session) Attach(inf processor.SharedIndexInformer, probe *liveprobe.ReflectorProbe, bytes *liveprobe.CacheBytes, name, source string, controls []Control) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.informer, s.probe, s.bytes, s.name, s.source, s.controls = inf, probe, bytes, name, source, controls
}

// SetSourceNote adds note() to the source line each time the page reads
// it.
func (s *Session) SetSourceNote(note func() string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sourceNote = note
}

// SetWorkqueue adds a controller's workqueue to the row of the listener
// whose name starts with what wq returns.
func (s *Session) SetWorkqueue(wq func() (listener string, st WorkqueueState, ok bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workqueue = wq
}

func (s *Session) controlList() ([]Control, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.controls, s.none
}

// pipeline reads the informer's own counters.
func (s *Session) pipeline() Pipeline {
	s.mu.Lock()
	inf, probe, bytes, p, note, wq := s.informer, s.probe, s.bytes, Pipeline{Informer: s.name, Source: s.source}, s.sourceNote, s.workqueue
	s.mu.Unlock()
	p.Holdings = liveprobe.Holdings(bytes, probe)
	if note != nil {
		p.Source += note()
	}
	if inf == nil {
		return p
	}
	st, err := processor.ReadStats(inf)
	if err != nil {
		p.Source += " (" + err.Error() + ")"
		return p
	}
	p.Reflector = probe.State()
	p.Queue = QueueState{Kind: st.Queue.String(), Depth: st.QueueLen}
	p.HandleDeltas, p.Indexer = st.Distributed, st.Cached
	var wqListener string
	var wqState WorkqueueState
	hasWQ := false
	if wq != nil {
		wqListener, wqState, hasWQ = wq()
	}
	for _, ls := range st.Listeners {
		row := ListenerState{Name: ls.Name, AddCh: ls.AddCh, Pending: ls.Pending, Calls: ls.Calls,
			MeanMicros: float64(ls.MeanHandlerTime().Nanoseconds()) / 1e3, MaxMicros: float64(ls.MaxHandlerTime.Nanoseconds()) / 1e3}
		if hasWQ && strings.HasPrefix(ls.Name, wqListener) {
			row.Workqueue = &wqState
		}
		p.Listeners = append(p.Listeners, row)
	}
	return p
}

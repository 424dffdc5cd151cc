package ctrlkit_test

import (
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit/ctrlkit"
)

// The facts exercise 08-liveview/5-your-page judges by are what the page
// served on the participant's mux shows: the queue's row by its name,
// the slow handler among the handlers, the key's reconciles and the
// newest one's links. Run with -count=3, it also shows that an earlier
// run's reconciles, still in the process's span store, are not counted.
func TestYourPageShowsWhatItsConstructionSays(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(ctrlkit.YourPageMount, dropin.LiveViewHandler())
	yp := ctrlkit.StartYourPage(t, mux, []sdktrace.SpanProcessor{dropin.LiveViewSpanProcessor()})
	f, err := yp.Facts()
	if err != nil {
		t.Fatal(err)
	}
	st, err := yp.ReadMounted()
	if err != nil {
		t.Fatal(err)
	}
	if err := yp.PageAgrees(st); err != nil {
		t.Fatalf("the page disagrees with the construction: %v", err)
	}
	found := false
	for _, q := range st.Process.Queues {
		if q.Name == f.Queue {
			found = true
			if q.Adds != 11 || q.Merged != 6 || q.Reconciles != 5 || q.Depth != 0 || q.InFlight != 0 {
				t.Errorf("queue %s: %+v, want 11 adds, 6 merged, 5 reconciles, idle", q.Name, q)
			}
		}
	}
	if !found {
		t.Errorf("the page lists no queue %q: %+v", f.Queue, st.Process.Queues)
	}
	var handlers []string
	for _, inf := range st.Process.Informers {
		for _, h := range inf.Handlers {
			handlers = append(handlers, h.Name)
			if h.Calls != 11 {
				t.Errorf("handler %s made %d calls, want 11 (3 adds, 8 updates)", h.Name, h.Calls)
			}
		}
	}
	if len(handlers) != 3 || handlers[1] != f.Slow || !strings.HasSuffix(f.Slow, ".PriceAuditor#1") {
		t.Errorf("handlers %q, slow %q: want three, the second the PriceAuditor", handlers, f.Slow)
	}
	var links []int
	for _, r := range yp.Reconciles(st) {
		if r.Key == yp.Key {
			links = append(links, r.Links)
		}
	}
	if len(links) != f.Reconciles || len(links) == 0 || links[0] != f.Absorbed {
		t.Errorf("the page lists %d reconciles of %s (links, newest first: %v); the facts say %d, the newest with %d links", len(links), yp.Key, links, f.Reconciles, f.Absorbed)
	}
}

// A mux without the live view, or a tracer provider without the page's
// span store: ReadMounted says what the mux answered, and the page lists
// no reconcile.
func TestYourPageReadMountedSaysWhatIsMissing(t *testing.T) {
	yp := ctrlkit.StartYourPage(t, http.NewServeMux(), nil)
	if _, err := yp.ReadMounted(); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("an empty mux: ReadMounted said %v, want its 404", err)
	}
	mux := http.NewServeMux()
	mux.Handle(ctrlkit.YourPageMount, dropin.LiveViewHandler())
	yp = ctrlkit.StartYourPage(t, mux, nil)
	st, err := yp.ReadMounted()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(yp.Reconciles(st)); n != 0 {
		t.Errorf("no span processor given, and the page lists %d of this run's reconciles", n)
	}
}

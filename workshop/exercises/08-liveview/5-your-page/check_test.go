//go:build workshop

package yourpage

import (
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit/ctrlkit"
)

func TestYourPage(t *testing.T) {
	mux := http.NewServeMux()
	kit.Returns(t, "Mount", func() { Mount(mux) })
	var processors []sdktrace.SpanProcessor
	kit.Returns(t, "SpanProcessors", func() { processors = SpanProcessors() })
	// The run is built so that what the page shows follows from its
	// construction (the reconcile the updates land in is held until the
	// queue has counted every update): the answers are judged against
	// that, and the kit fails the run, saying so, when the queue's
	// counters disagree with it.
	yp := ctrlkit.StartYourPage(t, mux, processors)
	facts, err := yp.Facts()
	if err != nil {
		t.Fatalf("kit: %v", err)
	}

	st, err := yp.ReadMounted()
	listed := 0
	for _, r := range yp.Reconciles(st) {
		if r.Key == yp.Key {
			listed++
		}
	}
	switch {
	case err != nil:
		t.Errorf("your mux does not serve the live view of this process at %s: %v. Which handler of package dropin serves it, and which pattern of a ServeMux serves a path and everything below it? (hint 1)", ctrlkit.YourPageMount, err)
	case !st.Spans || listed == 0:
		t.Errorf("the page your mux serves lists no reconcile of %s under \"Why did this run\": nothing gives it the controller's spans. What must the tracer provider feed, beside an exporter, for the page to list reconciles? (hint 2)", yp.Key)
	default:
		// The list is read from spans, the counters are not: a list
		// that disagrees with the queue's own counts lost spans in this
		// run, and judging your reading against it would be judging the
		// machine's load.
		if err := yp.PageAgrees(st); err != nil {
			t.Fatalf("in this run the page's \"Why did this run\" list disagrees with the queue's own counters (%v): it lost spans, and the checker cannot judge your reading on it. Run the checker again.", err)
		}
	}

	if strings.TrimSpace(Queue) != facts.Queue {
		t.Errorf("Queue: %q is not the name the page gives the controller's traced queue: which table lists the queues? (hint 3)", Queue)
	}
	if strings.TrimSpace(Slow) != facts.Slow {
		t.Errorf("Slow: %q is not how the page names the handler whose calls take longest: compare the handlers' call times, and copy the name whole, as the page writes it (hint 3)", Slow)
	}
	// One message for both counts: each named on its own would be found
	// by counting up.
	if Reconciles != facts.Reconciles || Absorbed != facts.Absorbed {
		t.Errorf("your counts for %s are not what the page's \"Why did this run\" list shows: which reconciles did the key have, from the initial list on, and what does a reconcile's links column count, and what not? (hints 4 and 5)", yp.Key)
	}
}

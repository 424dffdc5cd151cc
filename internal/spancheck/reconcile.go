package spancheck

import (
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// ReconcileChain is the path from one reconcile up to its trace's root:
// Spans[0] is the workqueue.process span, the last one the root. Complete
// reports whether a root was reached (false: a span is missing from the
// export).
//
// By the contract's "After the handler" section a well-formed chain reads,
// from the root down:
//
//	ListAndWatch <source> → HandleDeltas → distribute → addCh → pop → nextCh → On*
//	  → workqueue.add [→ workqueue.delayed] → workqueue.queued → workqueue.process
//
// where the part above workqueue.add may instead be an AddEventHandler root
// (a synthetic add), another reconcile (a key re-added during that
// reconcile, whose own chain goes on upwards), or nothing (an add made
// outside any traced call is a root).
type ReconcileChain struct {
	Spans    []*Span
	Complete bool
}

// Key is the reconcile's workqueue.key.
func (c ReconcileChain) Key() string { return c.Spans[0].Attr(tracing.KeyWorkqueueKey) }

// Root is the chain's last span.
func (c ReconcileChain) Root() *Span { return c.Spans[len(c.Spans)-1] }

// FromWatch reports whether the chain is complete and its root is a
// "ListAndWatch <source>" span: the reconcile traces back to what the
// reflector received (or listed, or resynced).
func (c ReconcileChain) FromWatch() bool {
	return c.Complete && isObjectRoot(c.Root())
}

// Handler returns the chain of the handler call the reconcile's key was
// added in (the nearest On* above it), and false when there is none.
func (c ReconcileChain) Handler() (Chain, bool) {
	for i, s := range c.Spans {
		if IsHandlerCall(s) {
			return Chain{Spans: c.Spans[i:], Complete: c.Complete}, true
		}
	}
	return Chain{}, false
}

// ReconcileChains returns a chain per workqueue.process span, in start
// order.
func (ix *Index) ReconcileChains() []ReconcileChain {
	processes := ix.inStartOrder(func(s *Span) bool { return s.Name == tracing.SpanWorkqueueProcess })
	out := make([]ReconcileChain, 0, len(processes))
	for _, p := range processes {
		spans, complete := ix.pathToRoot(p)
		out = append(out, ReconcileChain{Spans: spans, Complete: complete})
	}
	return out
}

// Check returns what is wrong with c by the contract, or nil: each
// reconcile's segment process ← queued ← [delayed ←] add, with the
// workqueue's attributes, one key and one queue per segment, the kinds of
// its ends, and a non-merged add (a merged add ends its trace); then what
// the add hangs from: nothing, another reconcile's segment, or a handler
// call whose chain [Chain.Check] accepts. It does not ask for a
// ListAndWatch root: [ReconcileChain.FromWatch] does.
func (c ReconcileChain) Check() error {
	var problems []string
	if !c.Complete {
		problems = append(problems, "a span is missing between the reconcile and the root")
	}
	rest := c.Spans
	for len(rest) > 0 {
		n, ok, segProblems := checkReconcileSegment(rest)
		problems = append(problems, segProblems...)
		if !ok || n == len(rest) {
			break
		}
		rest = rest[n:]
		switch {
		case rest[0].Name == tracing.SpanWorkqueueProcess:
			continue // a re-add made during that reconcile
		case IsHandlerCall(rest[0]):
			if err := (Chain{Spans: rest, Complete: c.Complete}).Check(); err != nil {
				problems = append(problems, "the handler call's chain: "+err.Error())
			}
		default:
			problems = append(problems, fmt.Sprintf("workqueue.add hangs from %q, want a handler call (On*), a workqueue.process or nothing", rest[0].Name))
		}
		break
	}
	for _, s := range c.Spans {
		if s.TraceID != c.Spans[0].TraceID {
			problems = append(problems, s.Name+" is in another trace")
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", c, strings.Join(problems, "; "))
}

// checkReconcileSegment checks spans[0:n], one reconcile's own part
// (process ← queued ← [delayed ←] add), and returns n; ok is false when
// the segment is not one, so that what is above it cannot be read.
func checkReconcileSegment(spans []*Span) (n int, ok bool, problems []string) {
	process := spans[0]
	want := []string{tracing.SpanWorkqueueProcess, tracing.SpanWorkqueueQueued, tracing.SpanWorkqueueAdd}
	if len(spans) > 2 && spans[2].Name == tracing.SpanWorkqueueDelayed {
		want = []string{tracing.SpanWorkqueueProcess, tracing.SpanWorkqueueQueued, tracing.SpanWorkqueueDelayed, tracing.SpanWorkqueueAdd}
	}
	n = min(len(want), len(spans))
	names := make([]string, n)
	for i, s := range spans[:n] {
		names[i] = s.Name
	}
	if !slices.Equal(names, want) {
		if process.IsRoot() {
			return 1, false, []string{"workqueue.process is a root: the queue never saw the add that made its key wait"}
		}
		return n, false, []string{"want workqueue.process ← workqueue.queued ← [workqueue.delayed ←] workqueue.add"}
	}
	for _, s := range spans[:n] {
		if s.Attr(tracing.KeyWorkqueueName) != process.Attr(tracing.KeyWorkqueueName) || s.Attr(tracing.KeyWorkqueueName) == "" {
			problems = append(problems, fmt.Sprintf("%s has %s %q, the reconcile %q", s.Name, tracing.KeyWorkqueueName,
				s.Attr(tracing.KeyWorkqueueName), process.Attr(tracing.KeyWorkqueueName)))
		}
		if s.Attr(tracing.KeyWorkqueueKey) != process.Attr(tracing.KeyWorkqueueKey) || s.Attr(tracing.KeyWorkqueueKey) == "" {
			problems = append(problems, fmt.Sprintf("%s has %s %q, the reconcile %q", s.Name, tracing.KeyWorkqueueKey,
				s.Attr(tracing.KeyWorkqueueKey), process.Attr(tracing.KeyWorkqueueKey)))
		}
	}
	add := spans[n-1]
	if process.Kind != trace.SpanKindConsumer {
		problems = append(problems, "workqueue.process is not a CONSUMER span")
	}
	if add.Kind != trace.SpanKindProducer {
		problems = append(problems, "workqueue.add is not a PRODUCER span")
	}
	if add.Attr(tracing.KeyWorkqueueCoalesced) != "false" {
		problems = append(problems, fmt.Sprintf("workqueue.add has %s=%q, want false: a merged add ends its trace", tracing.KeyWorkqueueCoalesced,
			add.Attr(tracing.KeyWorkqueueCoalesced)))
	}
	if n == 4 && spans[2].Attr(tracing.KeyWorkqueueCoalesced) != "false" {
		problems = append(problems, fmt.Sprintf("workqueue.delayed has %s=%q, want false: a merged delay ends its trace", tracing.KeyWorkqueueCoalesced,
			spans[2].Attr(tracing.KeyWorkqueueCoalesced)))
	}
	return n, true, problems
}

// String says what the chain is: "ns/a workqueue.process ← … ← ListAndWatch watch".
func (c ReconcileChain) String() string {
	names := make([]string, len(c.Spans))
	for i, s := range c.Spans {
		names[i] = s.Name
	}
	return c.Key() + " " + strings.Join(names, " ← ")
}

// Package liveview serves trace-demo's live page: one local page
// that draws the informer's pipeline with its own counters, lists the
// recent events and opens any of them as a waterfall of its exported spans,
// and, on the embedded API server, offers controls that drive the informer.
//
// Everything is served from the binary (go:embed, in internal/livepage,
// the page dropin.LiveViewHandler serves too): the page, its script and
// its style. It loads nothing from any other host, so it works offline
// in a workshop room. The server binds to loopback unless told otherwise,
// answers only requests addressed to it (its Host: no DNS rebinding),
// runs a control only for its own page or a client that is no browser
// (net/http's CrossOriginProtection: no cross-site POST), and forbids
// framing and anything inline (its Content-Security-Policy).
//
// The counters come from the informer's own state (a [Pipeline] the caller
// builds, e.g. from chapter 5's ReadStats), never from spans, so they count
// every object even when tracing is selective. The event list and the
// waterfalls come from a [SpanStore], a span processor that keeps the
// spans of the last traces only (bounded memory on a long run).
package liveview

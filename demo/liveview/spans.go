package liveview

import "github.com/informer-anatomy/informer-anatomy/internal/livepage"

// The span store lives in internal/livepage, one code with
// dropin.LiveViewHandler's; these names keep the demo's spelling.

// SpanStore is [livepage.SpanStore].
type SpanStore = livepage.SpanStore

// Event is [livepage.Event], one row of the event list.
type Event = livepage.Event

// SpansPerTrace is [livepage.SpansPerTrace].
const SpansPerTrace = livepage.SpansPerTrace

// NewSpanStore is [livepage.NewSpanStore].
func NewSpanStore(maxTraces int) *SpanStore { return livepage.NewSpanStore(maxTraces) }

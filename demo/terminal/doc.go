// Package terminal is how trace-demo speaks on a terminal: a [Printer] for
// lesson lines, status and warnings (one line at a time, a progress line
// that never overwrites them), [Safe] and [SafeWriter], which show the
// control characters of text that came from an API server instead of
// obeying them, and the waterfalls and summaries drawn from the run's
// spans ([Analyse], [DrawWaterfalls], [DrawSummary], [DrawShortSummary]).
//
// It sits above the chapters (demo/) and knows nothing of lessons
// or clusters: a [result.Showcase] says which trace to draw, and whoever ran the
// workload chooses it.
package terminal

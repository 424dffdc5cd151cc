// Command trace-demo shows the path of every object through this
// repository's informer (chapters 1–6), as OpenTelemetry spans and as a
// waterfall in the terminal:
//
//	ListAndWatch → RealFIFO.queued (or DeltaFIFO.queued) → HandleDeltas
//	  → Indexer + distribute → addCh → pop → nextCh → OnAdd / OnUpdate / OnDelete
//
// With no flags it runs the lessons on the embedded API server and stops by
// itself; --cluster (or --kubeconfig, --context) watches a real cluster;
// --ui serves the live view. Spans go nowhere unless asked: --out FILE
// (stdouttrace JSON) or --exporter otlp. docs/tracing.md explains how to
// read them; --help lists the flags.
//
// This package is the flags and the wiring only. What runs is in demo/,
// above the chapters (ARCHITECTURE.md):
//
//   - demo: the handlers every run gives its informer (*demo.slowHandler
//     and the others), and the waits on what they have seen;
//   - demo/lessons: the embedded run and its lessons, one file each
//     (lesson_*.go), in one table that the terminal run and the live view's
//     lesson script both read;
//   - demo/cluster: the run against a real cluster;
//   - demo/livecontrols: the live view's controls on the embedded
//     server, and demo/liveview the page itself;
//   - demo/result: what a run hands back (the traces to draw, its counts);
//   - demo/terminal: what is printed (lines, waterfalls, summaries);
//   - demo/telemetry: the tracer provider, the collector behind the
//     waterfalls, and the export queue;
//   - demo/informers: the informer every mode shows, built through
//     chapter 6's factory;
//   - demo/demoproc: runs the built trace-demo as a process, for the tests
//     and the workshop's checkers.
//
// Exit codes: 0 success, 1 a failed run (cluster problem, export failure, a
// trace that breaks the span contract), 2 bad flags.
package main

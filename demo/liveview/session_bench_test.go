package liveview_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/demo/informers"
	"github.com/informer-anatomy/informer-anatomy/demo/liveview"
	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
	"github.com/informer-anatomy/informer-anatomy/internal/informerbench"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

const (
	benchNamespace = "demo"
	benchPods      = 10   // listed, then updated in turn
	benchUpdates   = 5000 // watch events per iteration
)

type dropExporter struct{}

func (dropExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkLiveView measures what the live view adds to a traced embedded
// run (docs/performance.md keeps the figure). Both variants run the demo's own informer
// (informers.For, the RealFIFO, three handlers) on the embedded API
// server, with every span recorded and sent through the demo's export
// queue to an exporter that drops them; per iteration
// benchPods pods are listed and benchUpdates updates written and handled
// by every handler. with-liveview adds what --ui adds: the SpanStore as
// one more span processor (liveTraces traces), the page's server with the
// informer attached, and a poller doing what an open page does every
// 200 ms (GET /api/state, which carries the event list) plus opening the
// newest event's waterfall, as a click would (see pollLikeThePage). hack/benchtable's -vs
// with-liveview=traced gives the ratio.
func BenchmarkLiveView(b *testing.B) {
	for _, live := range []bool{false, true} {
		name := "traced"
		if live {
			name = "with-liveview"
		}
		b.Run(name, func(b *testing.B) {
			// History enough for a whole iteration: a watch the writer
			// outruns is ended and resumes from history without a relist.
			srv, err := apiserver.Start(apiserver.Options{HistoryLimit: 4 * benchUpdates})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Stop()
			for i := range benchPods {
				if _, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: fmt.Sprint("web-", i)}}); err != nil {
					b.Fatal(err)
				}
			}
			v := 0
			cpu := cputime.Process()
			for b.Loop() {
				v = benchLiveIteration(b, srv, live, v)
			}
			cpu = cputime.Process() - cpu
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(benchPods+benchUpdates)), "ns/event")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// benchLiveIteration runs one informer from its initial state (streamed)
// to its last update's handler calls; v numbers the updates across
// iterations.
func benchLiveIteration(b *testing.B, srv *apiserver.Server, live bool, v int) int {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(telemetry.NewExportQueue(dropExporter{})))
	var l *liveview.Session
	stopPoll := func() {}
	if live {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		l = liveview.ServeSession(ln, "http://"+ln.Addr().String()+"/", liveview.SessionOptions{TracerProvider: tp, Traces: 5000,
			SpansDropped: func() int64 { return 0 }, Warn: func(string, ...any) {}, Stdout: io.Discard})
		stopPoll = pollLikeThePage(l.URL(), l.Spans())
	}
	client, err := factory.NewForConfig(srv.Config())
	if err != nil {
		b.Fatal(err)
	}
	f := factory.NewSharedInformerFactoryWithOptions(client, 0, factory.WithNamespace(benchNamespace), factory.WithTracerProvider(tp))
	// With the page, the informer counts its cache's bytes, as the demo's does.
	var bytes *liveprobe.CacheBytes
	if live {
		bytes = &liveprobe.CacheBytes{}
	}
	inf, probe, err := informers.For(f, client, informers.Spec{Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: benchNamespace,
		Queue: processor.RealFIFOQueue, TracerProvider: tp, Bytes: bytes})
	if err != nil {
		b.Fatal(err)
	}
	hs := make([]*informerbench.Counter, 3)
	for i := range hs {
		hs[i] = informerbench.NewCounter(benchPods + benchUpdates)
		if _, err := inf.AddEventHandler(hs[i]); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	if l != nil {
		l.Attach(inf, probe, bytes, "bench", "embedded", nil)
	}
	// Updates written before the initial state is in would be folded into
	// it: wait for the streamed pods to reach every handler.
	for _, h := range hs {
		for h.Count() < benchPods {
			time.Sleep(time.Millisecond)
		}
	}
	for i := range benchUpdates {
		v++
		if err := update(srv, fmt.Sprint("web-", i%benchPods), fmt.Sprint(v)); err != nil {
			b.Fatal(err)
		}
	}
	for _, h := range hs {
		<-h.Done
	}
	cancel()
	f.Shutdown()
	stopPoll()
	if l != nil {
		l.Stop()
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	return v
}

// pollLikeThePage reads the data endpoint every 200 ms, as the page's
// script does, and opens the newest event's waterfall each time. The
// answers are read and dropped: parsing them is the browser's work, in
// another process, and decoding them here cost about 7% of this process's
// CPU, more than the server's side of the page; the newest trace's ID is
// taken from the store directly for the same reason.
func pollLikeThePage(url string, spans *liveview.SpanStore) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	get := func(path string) {
		res, err := http.Get(url + path)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			get("api/state")
			if ev := spans.Events(1); len(ev) > 0 {
				get("api/trace/" + ev[0].TraceID)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// update sets the label v of pod name, as the demo's updates do.
func update(srv *apiserver.Server, name, v string) error {
	obj, err := srv.Get(apiserver.Pods, benchNamespace, name)
	if err != nil {
		return err
	}
	p := obj.(*corev1.Pod).DeepCopy()
	p.Labels = map[string]string{"v": v}
	_, err = srv.Update(p)
	return err
}

package lessons

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// relist: a pod deleted while the watch is down comes back as a
// DeletedFinalStateUnknown after the relist, a new stream (no LIST); on the
// RealFIFO the relist is one ReplacedAll entry, and each object's trace
// links to it. The reflector's requests, read from the probe on its
// ListerWatcher, are printed.
func init() {
	register(Lesson{
		Name:  "relist",
		Order: 50,
		Text: func(*Env) string {
			return "stop the API server, delete demo/doomed, compact history, restart: the informer must fetch the whole state again."
		},
		LookFor: "  Look for: after the restart the watch cannot resume from a compacted resourceVersion, so the\n" +
			"  reflector fetches the whole state again in a new Reflector.ListAndWatch cycle: as a stream again\n" +
			"  (WATCH sendInitialEvents=true), not a LIST; the line below lists its requests. The pod missing from\n" +
			"  the streamed state reaches OnDelete as a DeletedFinalStateUnknown: root \"ListAndWatch watchlist\",\n" +
			"  TOMBSTONE. On the RealFIFO the whole state is one queue entry (HandleDeltas ReplacedAll): every\n" +
			"  object and every tombstone still gets its own trace, whose root links to the entry's RealFIFO.ReplacedAll span.",
		Run: relist,
	})
}

func relist(e *Env) (Outcome, error) {
	const doomed = Namespace + "/doomed"
	for _, h := range e.handlers {
		h.Record().ForgetTombstone(doomed)
	}
	if err := e.deleteIfThere(apiserver.Pods, Namespace, "doomed"); err != nil {
		return Outcome{}, err
	}
	if err := e.CreatePod("doomed"); err != nil {
		return Outcome{}, err
	}
	if err := e.handlersCaughtUp("demo/doomed's ADDED"); err != nil {
		return Outcome{}, err
	}
	since := e.requestsSent()
	e.srv.Stop()
	if err := e.srv.Delete(apiserver.Pods, Namespace, "doomed"); err != nil {
		return Outcome{}, err
	}
	// Another write after the delete, then compaction: the watch's
	// resourceVersion is now too old to resume, so the reflector must
	// fetch the whole state again (a stream), which no longer has
	// demo/doomed.
	if err := e.deleteIfThere(apiserver.ConfigMaps, Namespace, "bump"); err != nil {
		return Outcome{}, err
	}
	if _, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "bump"}}); err != nil {
		return Outcome{}, err
	}
	e.srv.Compact()
	if err := e.srv.Restart(); err != nil {
		return Outcome{}, err
	}
	if err := e.handlersRelisted("the relist's tombstone for demo/doomed"); err != nil {
		return Outcome{}, err
	}
	out := Outcome{Show: []result.Showcase{result.Show("deleted while the watch was down: a tombstone from the relist's stream", doomed, result.RootIs("ListAndWatch watchlist", "TOMBSTONE"))}}
	hs := tombstonesSeen(e.handlers, doomed)
	if len(hs) == 0 {
		out.Line = "relist: demo/doomed reached no handler as a DeletedFinalStateUnknown (its delete arrived as a watch event?)"
		return out, nil
	}
	out.Line = fmt.Sprintf("relist: demo/doomed reached OnDelete as a DeletedFinalStateUnknown (%s)\n· relist: %s", strings.Join(hs, ", "), e.requestsSince(since))
	return out, nil
}

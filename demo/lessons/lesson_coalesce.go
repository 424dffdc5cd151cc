package lessons

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/demo/result"
	"github.com/informer-anatomy/informer-anatomy/demo/telemetry"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// coalesce: lessons/web-coalesced changes twice as a DeltaFIFO informer's
// initial state completes (at its stream's bookmark); the informer's pop
// loop is held until both watch events are queued (popHold), so the watch's
// two MODIFIED deltas join the Replaced delta of the initial state still
// queued for the key, and Pop returns three deltas at once, on every run.
// The lesson teaches that queue, so its informer is a DeltaFIFO one of its
// own whatever --queue says.
func init() {
	register(Lesson{
		Name:  "coalesce",
		Order: 20,
		Text: func(*Env) string {
			return "lessons/web-coalesced changes twice as its initial state arrives, on a DeltaFIFO whose pop loop waits until both changes are queued."
		},
		LookFor: "  Look for: HandleDeltas with informer.deltas.count 3 (Replaced, Updated, Updated popped together);\n" +
			"  each delta keeps its own trace, and HandleDeltas links to the others' roots.\n" +
			"  The RealFIFO (client-go's queue since 1.33) never does this.",
		Run: coalesce,
	})
}

func coalesce(e *Env) (Outcome, error) {
	key := lessonNamespace + "/web-coalesced"
	started := time.Now()
	// The lesson's informer is its own and lists afresh: a pod left by an
	// earlier run of the lesson (the live view's script runs it again) is
	// simply made anew.
	if err := e.deleteIfThere(apiserver.Pods, lessonNamespace, "web-coalesced"); err != nil {
		return Outcome{}, err
	}
	if _, err := e.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: lessonNamespace, Name: "web-coalesced"}}); err != nil {
		return Outcome{}, err
	}
	l, err := e.startLessonInformer("pods-coalesce", processor.DeltaFIFOQueue, "", func() (string, error) {
		var last string
		for _, v := range []string{"1", "2"} {
			p, err := e.updateObj(lessonNamespace, "web-coalesced", v)
			if err != nil {
				return "", err
			}
			last = p.ResourceVersion
		}
		return last, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	caughtUp := l.caughtUp(e, "the coalesce lesson's informer to see every change")
	l.stop()
	if err := l.err(); err != nil {
		return Outcome{}, err
	}
	if caughtUp != nil {
		return Outcome{}, caughtUp
	}
	out := Outcome{Show: []result.Showcase{result.Show("changed as the initial state arrived: deltas coalesced in a DeltaFIFO", key, result.RootIs("ListAndWatch watch", "MODIFIED"))}}
	if n := maxPoppedTogether(e.tel.Collector, key, started); n == 0 && e.filter != nil {
		out.Line = "coalesce: " + key + " is not among the traced objects, so the spans cannot tell how many of its deltas were popped together"
	} else {
		out.Line = fmt.Sprintf("coalesce (on a DeltaFIFO informer, whatever --queue says): %d deltas of %s were popped together", n, key)
	}
	return out, nil
}

// maxPoppedTogether is the largest informer.deltas.count among key's
// HandleDeltas spans that started at since or later.
func maxPoppedTogether(c *telemetry.Collector, key string, since time.Time) int {
	spans, _ := c.Snapshot()
	n := 0
	for _, s := range spans {
		if s.Name == tracing.SpanHandleDeltas && s.Attr(tracing.KeyObjectKey) == key && !s.Start.Before(since) {
			var k int
			if _, err := fmt.Sscan(s.Attr(tracing.KeyDeltasCount), &k); err == nil {
				n = max(n, k)
			}
		}
	}
	return n
}

package lessons

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// The reflector's requests, as the relist and fallback lessons report them:
// read from the probe on the informer's ListerWatcher (the very requests
// the live view's reflector box lists), never written in advance.

// requestsSent is how many requests the reflector has sent so far.
func (e *Env) requestsSent() int {
	st := e.probe.State()
	return st.Streams + st.Lists + st.Watches
}

// requestsAfter returns the requests sent after the first since ones that
// the probe still holds (its last liveprobe.RecentRequests), and how many
// more it no longer holds.
func (e *Env) requestsAfter(since int) (reqs []liveprobe.ProbedRequest, dropped int) {
	st := e.probe.State()
	n := st.Streams + st.Lists + st.Watches - since
	reqs = st.Requests
	if n < len(reqs) {
		reqs = reqs[len(reqs)-n:]
	}
	return reqs, n - len(reqs)
}

// requestsSince says what the reflector sent after the first since
// requests, one after the other, then what that amounts to.
func (e *Env) requestsSince(since int) string {
	reqs, dropped := e.requestsAfter(since)
	if len(reqs) == 0 {
		return "the reflector sent no request"
	}
	var lines []string
	if dropped > 0 {
		lines = append(lines, fmt.Sprintf("(%d earlier)", dropped))
	}
	// A request repeated as it was (a WATCH refused while the server is
	// down, retried after each backoff) is said once, with a count.
	repeats := 1
	for i, r := range reqs {
		if i+1 < len(reqs) && reqs[i+1] == r {
			repeats++
			continue
		}
		line := r.String()
		if repeats > 1 {
			line += fmt.Sprintf(" (×%d)", repeats)
		}
		lines = append(lines, line)
		repeats = 1
	}
	out := "the reflector sent " + strings.Join(lines, " → ")
	if v := requestsVerdict(reqs); v != "" {
		out += ": " + v
	}
	return out
}

// requestsVerdict says how the reflector fetched the whole state in reqs:
// streamed (no LIST), or listed after a refused stream, or listed.
func requestsVerdict(reqs []liveprobe.ProbedRequest) string {
	refused, streamed, listed := "", false, false
	for _, r := range reqs {
		switch {
		case r.Verb == liveprobe.VerbStream && r.Bookmark != "":
			streamed = true
		case r.Verb == liveprobe.VerbStream && r.Outcome != "" && !strings.HasPrefix(r.Outcome, "ERROR") &&
			r.Outcome != liveprobe.OutcomeClosedEarly && r.Outcome != liveprobe.OutcomeConnectionRefused:
			refused = r.Outcome
		case r.Verb == liveprobe.VerbList && r.Outcome == "":
			listed = true
		}
	}
	switch {
	case refused != "" && listed:
		return "the stream was refused (" + refused + "), so the reflector fell back to the classic LIST, then WATCH"
	case streamed && !listed:
		return "the whole state streamed again, no LIST"
	case listed:
		return "the whole state LISTed"
	}
	return ""
}

// fellBack reports whether reqs hold a refused stream, then a LIST, then a
// WATCH: the fallback, complete.
func fellBack(reqs []liveprobe.ProbedRequest) bool {
	step := 0
	for _, r := range reqs {
		switch {
		case step == 0 && r.Verb == liveprobe.VerbStream && r.Outcome != "" && !strings.HasPrefix(r.Outcome, "ERROR"):
			step = 1
		case step == 1 && r.Verb == liveprobe.VerbList && r.Outcome == "":
			step = 2
		case step == 2 && r.Verb == liveprobe.VerbWatch:
			return true
		}
	}
	return false
}

// ForceRelist makes the reflector fetch the whole state again, as a
// kube-apiserver whose history has moved on would: a write the pod watch
// does not see moves the server past the reflector's resourceVersion,
// compacting there and closing the watches makes the rewatch fail with
// 410 Expired.
func (e *Env) ForceRelist() error {
	e.bumps++
	if _, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: fmt.Sprint("bump-", e.bumps)}}); err != nil {
		return err
	}
	e.srv.Compact()
	e.srv.CloseWatches()
	return nil
}

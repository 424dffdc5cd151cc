//go:build workshop

package pops

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

type queue interface {
	Add(any) error
	Update(any) error
	Delete(any) error
}

func feed(q queue) {
	p := func(name, rv string) *corev1.Pod { return kit.Pod("", name, kit.WithRV(rv)) }
	_ = q.Add(p("a", "1"))
	_ = q.Add(p("b", "2"))
	_ = q.Update(p("a", "3"))
	_ = q.Delete(p("b", "4"))
	_ = q.Delete(p("b", "5"))
	_ = q.Update(p("a", "6"))
}

func TestPrediction(t *testing.T) {
	ours := deltafifo.NewDeltaFIFOWithOptions(deltafifo.DeltaFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc})
	theirs := kcache.NewDeltaFIFOWithOptions(kcache.DeltaFIFOOptions{KeyFunction: kcache.MetaNamespaceKeyFunc})
	feed(ours)
	feed(theirs)
	got, gotTheirs := kit.Drain(ours), kit.DrainClientGo(theirs)
	if !slices.Equal(Pops, got) {
		t.Errorf("Pops: you predicted %q, not what chapter 4's DeltaFIFO pops: %s", Pops, whatIsWrong(Pops, got))
	}
	if !slices.Equal(gotTheirs, got) {
		// Said only when the two disagree: a bug in chapter 4.
		t.Errorf("Pops: client-go's DeltaFIFO pops something else than chapter 4's (a bug of chapter 4: please report it)")
	}
}

// popForm is what kit.DescribeDeltas prints: the key, then each delta's
// type @ resourceVersion.
var popForm = regexp.MustCompile(`^\S+: \w+@\d+( \w+@\d+)*$`)

// whatIsWrong says what kind of mistake yours holds, and never which
// entry is wrong: "your entry N is the first that is not what happened"
// let a script pass a position at a time.
func whatIsWrong(yours, real []string) string {
	var says []string
	switch {
	case len(yours) < len(real):
		says = append(says, "the queue popped more entries than you wrote")
	case len(yours) > len(real):
		says = append(says, "the queue popped fewer entries than you wrote")
	}
	keys := func(pops []string) []string {
		var out []string
		for _, p := range pops {
			k, _, _ := strings.Cut(p, ":")
			out = append(out, k)
		}
		return out
	}
	forms, namespaced := true, true
	for _, p := range yours {
		forms = forms && popForm.MatchString(p)
		namespaced = namespaced && strings.Contains(strings.SplitN(p, ":", 2)[0], "/")
	}
	yourKeys := keys(yours)
	if len(slices.Compact(slices.Sorted(slices.Values(yourKeys)))) < len(yourKeys) {
		says = append(says, "you have a key popped twice: how many entries does a DeltaFIFO keep for one key until it is popped?")
	}
	if !forms {
		says = append(says, "some of your entries are not in the form kit.DescribeDeltas prints: the key, a colon, then each delta as Type@RV")
	}
	if !namespaced {
		says = append(says, `a key is namespace/name, and the task's namespace is "default"`)
	}
	if slices.Equal(yourKeys, keys(real)) {
		says = append(says, "the keys and their order are right, the deltas are not: which deltas does a DeltaFIFO merge, and of two Deletes in a row, which one stays?")
	} else {
		says = append(says, "look at which keys the queue holds, and in which order it pops them")
	}
	return strings.Join(says, "; ")
}

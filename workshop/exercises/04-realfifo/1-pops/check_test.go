//go:build workshop

package pops

import (
	"slices"
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
	ours := deltafifo.NewRealFIFOWithOptions(deltafifo.RealFIFOOptions{KeyFunction: store.MetaNamespaceKeyFunc, AtomicEvents: true})
	theirs := kcache.NewRealFIFOWithOptions(kcache.RealFIFOOptions{KeyFunction: kcache.MetaNamespaceKeyFunc, AtomicEvents: true})
	feed(ours)
	feed(theirs)
	got, gotTheirs := kit.Drain(ours), kit.DrainClientGo(theirs)
	if d := kit.DiffList(Pops, got); d != "" {
		t.Errorf("Pops: you predicted %q, not what chapter 4's RealFIFO pops: %s", Pops, d)
	}
	if !slices.Equal(gotTheirs, got) {
		// Said only when the two disagree: a bug in chapter 4.
		t.Errorf("Pops: client-go's RealFIFO pops something else than chapter 4's (a bug of chapter 4: please report it)")
	}
}

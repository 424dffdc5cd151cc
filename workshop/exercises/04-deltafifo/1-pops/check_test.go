//go:build workshop

package pops

import (
	"fmt"
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
	got, gotTheirs := kit.Drain(ours), drainTheirs(theirs)
	if d := kit.DiffList(Pops, got); d != "" {
		t.Errorf("Pops: you predicted %q, not what chapter 4's DeltaFIFO pops: %s", Pops, d)
	}
	if !slices.Equal(gotTheirs, got) {
		// Said only when the two disagree: a bug in chapter 4.
		t.Errorf("Pops: client-go's DeltaFIFO pops something else than chapter 4's (a bug of chapter 4: please report it)")
	}
}

// describeTheirs describes a pop of client-go's queue the way
// kit.DescribeDeltas describes ours.
func describeTheirs(obj any) string {
	ds := obj.(kcache.Deltas)
	var parts []string
	key := ""
	for _, d := range ds {
		switch o := d.Object.(type) {
		case kcache.DeletedFinalStateUnknown:
			key = o.Key
			rv := "nil"
			if o.Obj != nil {
				rv = o.Obj.(*corev1.Pod).ResourceVersion
			}
			parts = append(parts, fmt.Sprintf("%s@tombstone(%s)", d.Type, rv))
		case *corev1.Pod:
			key = o.Namespace + "/" + o.Name
			parts = append(parts, fmt.Sprintf("%s@%s", d.Type, o.ResourceVersion))
		}
	}
	return key + ": " + strings.Join(parts, " ")
}

// drainTheirs closes client-go's queue and pops everything left.
func drainTheirs(q interface {
	Pop(kcache.PopProcessFunc) (any, error)
	Close()
}) []string {
	q.Close()
	var out []string
	for {
		_, err := q.Pop(func(obj any, _ bool) error { out = append(out, describeTheirs(obj)); return nil })
		if err != nil {
			return out
		}
	}
}

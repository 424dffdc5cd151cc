package kit

import (
	"fmt"

	kcache "k8s.io/client-go/tools/cache"
)

// ClientGoPopper is client-go's queue as a checker pops it: a
// *cache.DeltaFIFO or a *cache.RealFIFO.
type ClientGoPopper interface {
	Pop(process kcache.PopProcessFunc) (any, error)
	Close()
}

// DrainClientGo is Drain for client-go's queues, in the same words, so that
// a checker can compare chapter 4's pops with client-go's on the same
// calls.
func DrainClientGo(q ClientGoPopper) []string {
	q.Close()
	return drain(func(each func(any)) error {
		_, err := q.Pop(func(obj any, _ bool) error { each(obj); return nil })
		return err
	}, kcache.ErrFIFOClosed, DescribeClientGoDeltas)
}

// DescribeClientGoDeltas is DescribeDeltas for what client-go's queues pop.
func DescribeClientGoDeltas(obj any) string {
	ds, ok := obj.(kcache.Deltas)
	if !ok || len(ds) == 0 {
		return fmt.Sprintf("%T", obj)
	}
	var ps []popped
	for _, d := range ds {
		p := popped{typ: string(d.Type), obj: d.Object}
		switch o := d.Object.(type) {
		case kcache.ReplacedAllInfo:
			p.entry, p.objects = true, o.Objects
		case kcache.SyncAllInfo, kcache.BookmarkInfo:
			p.entry = true
		case kcache.DeletedFinalStateUnknown:
			p.tombstone, p.key, p.obj = true, o.Key, o.Obj
		}
		ps = append(ps, p)
	}
	return describePopped(ps)
}

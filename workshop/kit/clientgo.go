package kit

import (
	"errors"
	"fmt"
	"strings"

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
	var out []string
	for {
		_, err := q.Pop(func(obj any, _ bool) error {
			out = append(out, DescribeClientGoDeltas(obj))
			return nil
		})
		if errors.Is(err, kcache.ErrFIFOClosed) {
			return out
		}
		if err != nil {
			out = append(out, "error: "+err.Error())
		}
	}
}

// DescribeClientGoDeltas is DescribeDeltas for what client-go's queues pop.
func DescribeClientGoDeltas(obj any) string {
	ds, ok := obj.(kcache.Deltas)
	if !ok || len(ds) == 0 {
		return fmt.Sprintf("%T", obj)
	}
	var parts []string
	key := ""
	for _, d := range ds {
		switch o := d.Object.(type) {
		case kcache.ReplacedAllInfo:
			var names []string
			for _, x := range o.Objects {
				names = append(names, nameOf(x))
			}
			return fmt.Sprintf("%s[%s]", d.Type, strings.Join(names, " "))
		case kcache.SyncAllInfo, kcache.BookmarkInfo:
			return string(d.Type)
		case kcache.DeletedFinalStateUnknown:
			key = o.Key
			parts = append(parts, fmt.Sprintf("%s@tombstone(%s)", d.Type, rvOf(o.Obj)))
		default:
			key = nameOf(o)
			parts = append(parts, fmt.Sprintf("%s@%s", d.Type, rvOf(o)))
		}
	}
	return key + ": " + strings.Join(parts, " ")
}

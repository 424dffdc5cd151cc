package kit

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// Popper is a queue that can be popped and closed: a *deltafifo.DeltaFIFO
// or a *deltafifo.RealFIFO.
type Popper interface {
	Pop(process deltafifo.PopProcessFunc) (any, error)
	Close()
}

// Drain closes q and pops everything still queued, describing each pop
// with [DescribeDeltas]. Both queues hand out what is queued before they
// report ErrFIFOClosed, so nothing is lost; q cannot be used afterwards.
func Drain(q Popper) []string {
	q.Close()
	var out []string
	for {
		_, err := q.Pop(func(obj any, _ bool) error {
			out = append(out, DescribeDeltas(obj))
			return nil
		})
		if errors.Is(err, deltafifo.ErrFIFOClosed) {
			return out
		}
		if err != nil {
			out = append(out, "error: "+err.Error())
		}
	}
}

// DescribeDeltas describes what one Pop handed out, e.g.
// "default/a: Added@1 Updated@2" (key, then each delta's type and the object's
// resourceVersion; a tombstone shows as "Deleted@tombstone(5)" with its last
// known resourceVersion; a ReplacedAll entry as "ReplacedAll[default/a default/b]").
func DescribeDeltas(obj any) string {
	ds, ok := obj.(deltafifo.Deltas)
	if !ok || len(ds) == 0 {
		return fmt.Sprintf("%T", obj)
	}
	var parts []string
	key := ""
	for _, d := range ds {
		switch o := d.Object.(type) {
		case deltafifo.ReplacedAllInfo:
			var names []string
			for _, x := range o.Objects {
				names = append(names, nameOf(x))
			}
			return fmt.Sprintf("%s[%s]", d.Type, strings.Join(names, " "))
		case deltafifo.SyncAllInfo, deltafifo.BookmarkInfo:
			return string(d.Type)
		case deltafifo.DeletedFinalStateUnknown:
			key = o.Key
			parts = append(parts, fmt.Sprintf("%s@tombstone(%s)", d.Type, rvOf(o.Obj)))
		default:
			key = nameOf(o)
			parts = append(parts, fmt.Sprintf("%s@%s", d.Type, rvOf(o)))
		}
	}
	return key + ": " + strings.Join(parts, " ")
}

// nameOf is the store key: namespace/name, or name for cluster-scoped
// objects.
func nameOf(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		if m.GetNamespace() == "" {
			return m.GetName()
		}
		return m.GetNamespace() + "/" + m.GetName()
	}
	return fmt.Sprintf("%T", obj)
}

func rvOf(obj any) string {
	if obj == nil {
		return "nil"
	}
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return "?"
}

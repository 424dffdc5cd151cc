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
	return drain(func(each func(any)) error {
		_, err := q.Pop(func(obj any, _ bool) error { each(obj); return nil })
		return err
	}, deltafifo.ErrFIFOClosed, DescribeDeltas)
}

// drain pops until the queue reports closed, describing each pop; an
// error on the way is one more line, so a checker shows it.
func drain(pop func(each func(any)) error, closed error, describe func(any) string) []string {
	var out []string
	for {
		err := pop(func(obj any) { out = append(out, describe(obj)) })
		if errors.Is(err, closed) {
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
	var ps []popped
	for _, d := range ds {
		p := popped{typ: string(d.Type), obj: d.Object}
		switch o := d.Object.(type) {
		case deltafifo.ReplacedAllInfo:
			p.entry, p.objects = true, o.Objects
		case deltafifo.SyncAllInfo, deltafifo.BookmarkInfo:
			p.entry = true
		case deltafifo.DeletedFinalStateUnknown:
			p.tombstone, p.key, p.obj = true, o.Key, o.Obj
		}
		ps = append(ps, p)
	}
	return describePopped(ps)
}

// popped is one delta of either library's queue, in the terms DescribeDeltas
// and DescribeClientGoDeltas share.
type popped struct {
	typ string
	obj any // the object; a tombstone's last known state
	// entry: a whole-queue entry (ReplacedAll, SyncAll, Bookmark), which
	// is the pop's whole description; objects are a ReplacedAll's.
	entry   bool
	objects []any
	// tombstone: a DeletedFinalStateUnknown, and its key.
	tombstone bool
	key       string
}

func describePopped(ps []popped) string {
	var parts []string
	key := ""
	for _, p := range ps {
		switch {
		case p.entry && p.objects != nil:
			var names []string
			for _, x := range p.objects {
				names = append(names, nameOf(x))
			}
			return fmt.Sprintf("%s[%s]", p.typ, strings.Join(names, " "))
		case p.entry:
			return p.typ
		case p.tombstone:
			key = p.key
			parts = append(parts, fmt.Sprintf("%s@tombstone(%s)", p.typ, rvOf(p.obj)))
		default:
			key = nameOf(p.obj)
			parts = append(parts, fmt.Sprintf("%s@%s", p.typ, rvOf(p.obj)))
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

package reflector

import "context"

// ReusingStore is a store that can keep a relist from holding a second copy
// of every object. The reflector hands it each object of a relist as the
// object arrives (a streamed object after the temporary store's transform,
// a listed one as its page arrives), and puts whatever ReuseRelisted returns
// into the list it will Replace the store with. A store that has the same
// object cached already (the same UID and resourceVersion) returns the
// cached one, so the copy that just arrived is garbage at once instead of
// living until the Replace beside the whole cache.
//
// Why: during a relist client-go's reflector holds the old cache and the
// whole new state at once until its Replace, so an informer's heap peaks at
// about twice its steady size (2.25x measured at 100,000 pods, issue 36);
// most of a relist is objects that did not change. A relist's handler calls
// stay what they were: an unchanged object is one the handlers get as
// OnUpdate with contents equal to the cached one's; here it is the cached
// one itself.
//
// prepared says the store has already done to out what its Replace would
// do to it (the transform): the reflector then tells Replace so, per list
// index, through [WithPrepared], and Replace must not do it again, so a
// transformer is called as often as client-go calls it. A ReusingStore is
// always a [ContextStore], since that is how the flags reach its Replace.
//
// ReuseRelisted is called from the reflector's goroutine while the
// store's consumer may be running: it must be safe against that.
//
// Ours: client-go has no counterpart; its reflector keeps every arriving
// object until the Replace (reflector.go list and watchList).
type ReusingStore interface {
	ReflectorStore
	ContextStore
	ReuseRelisted(obj any) (out any, prepared bool)
}

type preparedKey struct{}

// WithPrepared returns ctx carrying, for the i-th object of the Replace's
// list, whether the store's ReuseRelisted prepared it (see
// [ReusingStore]). Ours, as ReusingStore is.
func WithPrepared(ctx context.Context, prepared []bool) context.Context {
	return context.WithValue(ctx, preparedKey{}, prepared)
}

// PreparedFrom returns the flags [WithPrepared] put in ctx; nil when ctx
// carries none (a Replace not made by a reflector's relist through
// ReuseRelisted), and then no object of the list is prepared. An index past
// the end is not prepared either.
func PreparedFrom(ctx context.Context) []bool {
	p, _ := ctx.Value(preparedKey{}).([]bool)
	return p
}

// Prepared reports whether the i-th object of a Replace's list is flagged
// in prepared (see [PreparedFrom]).
func Prepared(prepared []bool, i int) bool { return i < len(prepared) && prepared[i] }

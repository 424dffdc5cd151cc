package reflector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaultPageSize is how many objects one LIST page asks for when the
// reflector pages (client-go's tools/pager default).
const defaultPageSize = 500

// listInPages runs a LIST as pages of pageSize (0: one unpaged request),
// hands each page's items to sink as the page arrives, and returns the
// list's resourceVersion and whether the server actually paged (sent a
// continue token).
//
// Every page after the first carries only the continue token: the token pins
// the snapshot's resourceVersion, so sending RV again would be rejected. If a
// token has expired (the server compacted its history mid-list), the whole
// list is retried once, unpaged, at the originally requested RV, since a
// partial old list glued to a newer remainder would be inconsistent: sink is
// reset first, dropping the pages it took.
//
// The requests are made on a goroutine of their own (fetchPages), one page
// ahead: as soon as a page has arrived and been handed over, the next is
// asked for, while sink still works on the one before. A page's request
// cannot go out before the page ahead of it has come back (its continue
// token is in it), so the LIST itself is a chain of round trips; what can
// overlap is the client's work on each page (extracting its items, checking
// them, trading unchanged ones for the cached objects) with the next round
// trip. At most one page waits for sink beside the one it is taking, so a
// relist still never holds more than two pages beyond the cache. A panic
// in the ListerWatcher is raised again here, on the caller's goroutine, as
// upstream's reflector list raises its pager goroutine's panic.
//
// Mirrors [k8s.io/client-go/tools/pager.ListPager.ListWithAlloc] with
// FullListIfExpired, written out here so the chapter shows paging whole.
// Upstream gathers every page's items and returns them together, and asks
// for each page after the one before has been gathered; ours hands each
// page on as it comes, so that a relist can trade each unchanged object for
// the cached one at once (see [ReusingStore]) instead of holding the whole
// new state beside the cache, and asks for the next page meanwhile, as
// upstream's ListPager.EachListItem does with up to PageBufferSize (10)
// pages buffered (tools/pager/pager.go eachListChunkBuffered), which the
// reflector does not use.
func listInPages(ctx context.Context, lw ListerWithContext, options metav1.ListOptions, pageSize int64, sink pageSink) (rv string, paged bool, err error) {
	if options.Limit == 0 {
		options.Limit = pageSize
	}
	// Cancelled on return: a fetcher still waiting to hand over a page (we
	// returned on an error) ends instead of waiting for good.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan fetchedPage) // unbuffered: one page ahead, not more
	go fetchPages(ctx, lw, options, pages)
	for fp := range pages {
		if fp.panicked != nil {
			panic(fp.panicked)
		}
		if fp.err != nil {
			return "", paged, fp.err
		}
		items, pageRV, err := extract(fp.page)
		if err != nil {
			return "", paged, err
		}
		if fp.whole {
			sink.reset()
			sink.take(items)
			return pageRV, paged, nil
		}
		if rv == "" {
			rv = pageRV // the first page's RV is the snapshot's
		}
		sink.take(items)
		if !fp.more {
			return rv, paged, nil
		}
		paged = true
	}
	// The fetcher stopped without a last page: the context ended.
	return "", paged, ctx.Err()
}

// fetchedPage is one answer fetchPages hands to listInPages.
type fetchedPage struct {
	page     runtime.Object
	more     bool // the page carried a continue token
	whole    bool // the unpaged retry after an expired token: the whole list
	err      error
	panicked any // what the ListerWatcher panicked with
}

// fetchPages makes listInPages' requests in order and hands each answer to
// out, then closes it; it stops after the last page, an error, or when ctx
// ends.
func fetchPages(ctx context.Context, lw ListerWithContext, options metav1.ListOptions, out chan<- fetchedPage) {
	defer close(out)
	defer func() {
		if r := recover(); r != nil {
			select {
			case out <- fetchedPage{panicked: r}:
			case <-ctx.Done():
			}
		}
	}()
	requested := options
	for ctx.Err() == nil {
		page, err := lw.ListWithContext(ctx, options)
		fp := fetchedPage{page: page, err: err}
		var next string
		switch {
		case err != nil && apierrors.IsResourceExpired(err) && options.Continue != "":
			requested.Limit, requested.Continue = 0, ""
			fp.page, fp.err = lw.ListWithContext(ctx, requested)
			fp.whole = true
		case err == nil:
			lm, lerr := meta.ListAccessor(page)
			if lerr != nil {
				fp.err = fmt.Errorf("unable to understand list result %T: %w", page, lerr)
				break
			}
			next = lm.GetContinue()
			fp.more = next != ""
		}
		select {
		case out <- fp:
		case <-ctx.Done():
			return
		}
		if fp.err != nil || fp.whole || !fp.more {
			return
		}
		options.Continue = next
		options.ResourceVersion, options.ResourceVersionMatch = "", ""
	}
}

// pageSink takes a LIST's items page by page (listInPages).
type pageSink interface {
	// take is given one page's items, in order.
	take(items []runtime.Object)
	// reset drops every item taken so far: the list starts over.
	reset()
}

// extract reads a list's items and resourceVersion.
func extract(list runtime.Object) ([]runtime.Object, string, error) {
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, "", fmt.Errorf("unable to understand list result %T: %w", list, err)
	}
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return nil, "", fmt.Errorf("unable to understand list result %T: %w", list, err)
	}
	return items, lm.GetResourceVersion(), nil
}

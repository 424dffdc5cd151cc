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
// Mirrors [k8s.io/client-go/tools/pager.ListPager.ListWithAlloc] with
// FullListIfExpired, written out here so the chapter shows paging whole.
// Upstream gathers every page's items and returns them together; ours hands
// each page on as it comes, so that a relist can trade each unchanged object
// for the cached one at once (see [ReusingStore]) instead of holding the
// whole new state beside the cache.
func listInPages(ctx context.Context, lw ListerWithContext, options metav1.ListOptions, pageSize int64, sink pageSink) (rv string, paged bool, err error) {
	if options.Limit == 0 {
		options.Limit = pageSize
	}
	requested := options
	for {
		if err := ctx.Err(); err != nil {
			return "", paged, err
		}
		page, err := lw.ListWithContext(ctx, options)
		if err != nil {
			if apierrors.IsResourceExpired(err) && options.Continue != "" {
				requested.Limit, requested.Continue = 0, ""
				page, err = lw.ListWithContext(ctx, requested)
				if err != nil {
					return "", paged, err
				}
				items, rv, err := extract(page)
				if err != nil {
					return "", paged, err
				}
				sink.reset()
				sink.take(items)
				return rv, paged, nil
			}
			return "", paged, err
		}
		pageItems, pageRV, err := extract(page)
		if err != nil {
			return "", paged, err
		}
		if rv == "" {
			rv = pageRV // the first page's RV is the snapshot's
		}
		sink.take(pageItems)
		lm, _ := meta.ListAccessor(page)
		if lm.GetContinue() == "" {
			return rv, paged, nil
		}
		paged = true
		options.Continue = lm.GetContinue()
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

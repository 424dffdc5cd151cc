package scalegen

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// Path is how a [Source] answers a reflector's first request.
type Path int

const (
	// WatchList streams the state on a WATCH with sendInitialEvents, as
	// kube-apiserver does with its WatchList feature on (client-go's
	// default first request since 1.35).
	WatchList Path = iota
	// PagedList answers the LIST, page by page when the client sets a limit,
	// and tells the reflector it cannot stream (IsWatchListSemanticsUnSupported),
	// as a source without a watch cache would.
	PagedList
)

// String is the path's name in benchmark names.
func (p Path) String() string {
	if p == PagedList {
		return "paged-list"
	}
	return "watch-list"
}

// change is one recorded update: pod i went to version at resourceVersion rv.
// Watches generate the pod from it as they send it, so a long run of updates
// costs 16 bytes each until sent, not a pod each.
type change struct {
	i, version uint32
	rv         uint64
}

// Source serves a population of pods as one resource's ListerWatcher for
// client-go's informer and ours (cache.ListerWatcher and
// cache.ListerWatcherWithContext). Every object it hands out is generated
// for that request. It is safe for concurrent use.
type Source struct {
	gen  *Generator
	path Path

	mu        sync.Mutex
	cond      *sync.Cond // signalled on every change and on Expire
	rv        uint64     // the last resourceVersion given out
	versions  []uint32   // each pod's version
	rvs       []uint64   // each pod's resourceVersion
	log       []change   // the changes since compactedRV, in order
	compacted uint64     // a watch from before this is 410 Gone
	expiry    int        // bumped by Expire: watches started before it end

	lists, watches atomic.Int64
	firstRequest   atomic.Int64 // unix nanoseconds of the first LIST or WATCH since Expire (or since NewSource)
}

// NewSource returns a Source over pods 0..n-1 of gen's population, each at
// version 0 and resourceVersion i+1, answering the first request by path.
func NewSource(gen *Generator, n int, path Path) *Source {
	src := &Source{gen: gen, path: path, versions: make([]uint32, n), rvs: make([]uint64, n), rv: uint64(n)}
	for i := range src.rvs {
		src.rvs[i] = uint64(i + 1)
	}
	src.cond = sync.NewCond(&src.mu)
	return src
}

// Len is how many pods the source serves.
func (src *Source) Len() int { return len(src.rvs) }

// Requests is how many LISTs (pages counted one by one) and WATCHes
// (watch-lists included) the source has served.
func (src *Source) Requests() (lists, watches int64) { return src.lists.Load(), src.watches.Load() }

// FirstRequest is when the source received its first LIST or WATCH since
// the last [Source.Expire] (or since [NewSource]): when the reflector began
// its relist, its backoff over. The zero time if none has arrived.
func (src *Source) FirstRequest() time.Time {
	if ns := src.firstRequest.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// IsWatchListSemanticsUnSupported tells both libraries' reflectors whether
// they may stream (client-go's watchlist.DoesClientNotSupportWatchListSemantics
// reads it).
func (src *Source) IsWatchListSemanticsUnSupported() bool { return src.path == PagedList }

// Update records a change of pod i (its next version, a new
// resourceVersion) and wakes every watch, which sends it as MODIFIED.
// It never waits for a watch to read.
func (src *Source) Update(i int) {
	src.mu.Lock()
	defer src.mu.Unlock()
	src.rv++
	src.versions[i]++
	src.rvs[i] = src.rv
	src.log = append(src.log, change{i: uint32(i), version: src.versions[i], rv: src.rv})
	src.cond.Broadcast()
}

// Expire ends every open watch with an ERROR event carrying a 410 Expired
// status, as kube-apiserver ends a watch whose resourceVersion has been
// compacted, and forgets the history, so that a watch from an older
// resourceVersion is refused the same way: the reflector must relist.
func (src *Source) Expire() {
	src.mu.Lock()
	defer src.mu.Unlock()
	src.expiry++
	src.compacted = src.rv
	src.log = nil
	src.firstRequest.Store(0)
	src.cond.Broadcast()
}

func (src *Source) touch() { src.firstRequest.CompareAndSwap(0, time.Now().UnixNano()) }

// List answers a LIST: every pod, or, with a limit, one page, the next ones
// picked up by the continue token. Each page shows its pods as they are
// when it is served; the token carries the first page's resourceVersion,
// which every page reports.
func (src *Source) List(opts metav1.ListOptions) (runtime.Object, error) {
	src.touch()
	src.lists.Add(1)
	start, listRV := 0, uint64(0)
	if opts.Continue != "" {
		var err error
		if start, listRV, err = parseContinue(opts.Continue); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	src.mu.Lock()
	if listRV == 0 {
		listRV = src.rv
	}
	end := len(src.rvs)
	if opts.Limit > 0 && int64(end-start) > opts.Limit {
		end = start + int(opts.Limit)
	}
	versions := append([]uint32(nil), src.versions[start:end]...)
	rvs := append([]uint64(nil), src.rvs[start:end]...)
	src.mu.Unlock()

	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(listRV, 10)}}
	list.Items = make([]corev1.Pod, len(versions))
	for k := range list.Items {
		src.gen.Fill(&list.Items[k], start+k, int(versions[k]), strconv.FormatUint(rvs[k], 10))
	}
	if end < len(src.rvs) {
		list.Continue = strconv.Itoa(end) + "/" + strconv.FormatUint(listRV, 10)
	}
	return list, nil
}

func parseContinue(token string) (start int, rv uint64, err error) {
	a, b, ok := strings.Cut(token, "/")
	if ok {
		if start, err = strconv.Atoi(a); err == nil {
			rv, err = strconv.ParseUint(b, 10, 64)
		}
	}
	if !ok || err != nil || start < 0 {
		return 0, 0, fmt.Errorf("continue token %q is not one this source gave out (want <index>/<resourceVersion>)", token)
	}
	return start, rv, nil
}

// ListWithContext is List; the context is not needed, a LIST never waits.
func (src *Source) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return src.List(opts)
}

// WatchWithContext is Watch, ended also when ctx is done.
func (src *Source) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := src.Watch(opts)
	if err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.(*sourceWatch).done:
		}
	}()
	return w, nil
}

// Watch answers a WATCH. With sendInitialEvents it first sends every pod as
// ADDED and then the initial-events-end bookmark (refused with 422 Invalid
// on a PagedList source, as a server with the WatchList gate off refuses
// it); otherwise it sends the changes after opts.ResourceVersion, or a 410
// Expired if they have been forgotten since.
func (src *Source) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	src.touch()
	src.watches.Add(1)
	streaming := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if streaming && src.path == PagedList {
		return nil, apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("ListOptions").GroupKind(), "", field.ErrorList{
			field.Forbidden(field.NewPath("sendInitialEvents"), "this source serves a paged LIST only (scalegen.PagedList); build it with scalegen.WatchList to stream")})
	}
	w := &sourceWatch{src: src, ch: make(chan watch.Event, 100), done: make(chan struct{})}
	src.mu.Lock()
	w.expiry = src.expiry
	from := src.rv
	if !streaming && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		rv, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
		if err != nil {
			src.mu.Unlock()
			return nil, apierrors.NewBadRequest(fmt.Sprintf("resourceVersion %q is not a number", opts.ResourceVersion))
		}
		if rv < src.compacted {
			src.mu.Unlock()
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, src.compacted))
		}
		from = rv
	}
	var versions []uint32
	var rvs []uint64
	if streaming {
		versions = append([]uint32(nil), src.versions...)
		rvs = append([]uint64(nil), src.rvs...)
	}
	src.mu.Unlock()
	go w.run(streaming, versions, rvs, from)
	return w, nil
}

// sourceWatch is one open watch: a goroutine generating each event as it
// sends it.
type sourceWatch struct {
	src    *Source
	ch     chan watch.Event
	done   chan struct{}
	stop   sync.Once
	expiry int
}

func (w *sourceWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *sourceWatch) Stop() {
	w.stop.Do(func() {
		close(w.done)
		// Wake the goroutine if it waits for a change.
		w.src.mu.Lock()
		w.src.cond.Broadcast()
		w.src.mu.Unlock()
	})
}

func (w *sourceWatch) send(ev watch.Event) bool {
	select {
	case w.ch <- ev:
		return true
	case <-w.done:
		return false
	}
}

func (w *sourceWatch) expired() bool {
	w.src.mu.Lock()
	defer w.src.mu.Unlock()
	return w.src.expiry != w.expiry
}

func (w *sourceWatch) sendExpired() {
	w.send(watch.Event{Type: watch.Error, Object: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
		Message: "The resourceVersion for the provided watch is too old.",
	}})
}

func (w *sourceWatch) run(streaming bool, versions []uint32, rvs []uint64, from uint64) {
	defer close(w.ch)
	if streaming {
		for i := range versions {
			if i%1024 == 0 && w.expired() {
				w.sendExpired()
				return
			}
			if !w.send(watch.Event{Type: watch.Added, Object: w.src.gen.Pod(i, int(versions[i]), strconv.FormatUint(rvs[i], 10))}) {
				return
			}
		}
		if !w.send(watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: strconv.FormatUint(from, 10),
			Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}}}) {
			return
		}
	}
	for {
		src := w.src
		src.mu.Lock()
		for src.expiry == w.expiry && (len(src.log) == 0 || src.log[len(src.log)-1].rv <= from) {
			select {
			case <-w.done:
				src.mu.Unlock()
				return
			default:
			}
			src.cond.Wait()
		}
		if src.expiry != w.expiry {
			src.mu.Unlock()
			w.sendExpired()
			return
		}
		// The log is in resourceVersion order: the first change after from.
		k := len(src.log)
		for k > 0 && src.log[k-1].rv > from {
			k--
		}
		pending := append([]change(nil), src.log[k:]...)
		src.mu.Unlock()
		for _, c := range pending {
			if !w.send(watch.Event{Type: watch.Modified, Object: src.gen.Pod(int(c.i), int(c.version), strconv.FormatUint(c.rv, 10))}) {
				return
			}
			from = c.rv
		}
	}
}

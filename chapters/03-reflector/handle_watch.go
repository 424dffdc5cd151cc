package reflector

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// handleWatch applies w's events to dst until the watch ends, and always
// stops w unless it returns early on the initial-events-end bookmark
// (exitOnInitialEventsEnd, for watch-list, which keeps the stream).
//
// setRV is called after every event with its resourceVersion and whether any
// non-ADDED event has been seen yet (the sign that a watch from "" or "0" is
// past its synthetic ADDED events).
//
// It returns whether the initial-events-end bookmark arrived, and why the
// watch ended: nil for a normal close; an API error for an ERROR event;
// VeryShortWatchError for a close within a second with no events;
// errorStopRequested when ctx is done; a resync error.
//
// Mirrors handleAnyWatch in upstream reflector.go. Unlike upstream, an event
// that cannot be stored (wrong type or GVK, no metadata, no name, a store
// error) is reported to the WatchErrorHandler, not only to the global error
// log, and then skipped: the watch goes on. An event whose resourceVersion is
// empty or not a number is reported and ends the watch with
// errWatchUntrusted, so the reflector relists, unless the source is one of
// client-go's test doubles (isTestSource), whose objects carry no
// resourceVersions: then it is applied and recorded as upstream does.
func (r *Reflector) handleWatch(ctx context.Context, start time.Time, w watch.Interface, dst ReflectorStore,
	exitOnInitialEventsEnd bool, resyncErr <-chan error, setRV func(rv string, pastSynthetic bool)) (initialEventsEnd bool, err error) {
	keepOpen := false
	defer func() {
		if !keepOpen {
			w.Stop()
		}
	}()
	pastSynthetic := false
	count := 0
	var waiting <-chan time.Time // ticks while a stream's bookmark is awaited
	var lastEvent time.Time
	if exitOnInitialEventsEnd {
		t := time.NewTicker(bookmarkWarningInterval)
		defer t.Stop()
		waiting = t.C
	}
	for {
		select {
		case <-waiting:
			r.warnBookmarkOverdue(ctx, start, lastEvent, count)
			continue
		case <-ctx.Done():
			return initialEventsEnd, errorStopRequested
		case err := <-resyncErr:
			return initialEventsEnd, err
		case event, ok := <-w.ResultChan():
			if !ok {
				if count == 0 && time.Since(start) < time.Second {
					return initialEventsEnd, &VeryShortWatchError{Name: r.name}
				}
				return initialEventsEnd, nil
			}
			if event.Type == watch.Error {
				return initialEventsEnd, apierrors.FromObject(event.Object)
			}
			m, verdict := r.checkEvent(ctx, event)
			switch verdict {
			case dropEvent:
				continue
			case endWatch:
				return initialEventsEnd, errWatchUntrusted
			}
			// Read before the store has the object: from then on a handler
			// may edit it, and a later read would race that edit and could
			// record the handler's resourceVersion, not the event's
			// (upstream's handleAnyWatch reads it before store.Add too).
			rv := m.GetResourceVersion()
			switch verdict {
			case recordOnly:
				if event.Type != watch.Added {
					pastSynthetic = true
				}
			case storeEvent:
				past, end := r.applyEvent(ctx, dst, event, m)
				pastSynthetic = pastSynthetic || past
				initialEventsEnd = initialEventsEnd || end
			}
			setRV(rv, pastSynthetic)
			count++
			if exitOnInitialEventsEnd && initialEventsEnd {
				keepOpen = true
				return initialEventsEnd, nil
			}
			if waiting != nil {
				lastEvent = time.Now()
			}
		}
	}
}

// eventVerdict is what handleWatch does with a watch event, by checkEvent.
type eventVerdict int

const (
	// storeEvent: store it and record its resourceVersion.
	storeEvent eventVerdict = iota
	// dropEvent: reported and skipped, its resourceVersion not recorded;
	// the watch goes on.
	dropEvent
	// recordOnly: reported and not stored, its resourceVersion recorded.
	recordOnly
	// endWatch: reported; the stream can no longer be trusted.
	endWatch
)

// checkEvent decides whether an event can be stored, reporting what it
// refuses to the WatchErrorHandler: an object of another type or GVK than
// the reflector stores, or without metadata, is dropped; a resourceVersion
// that is not a decimal number ends the watch; an object without a name
// is not stored but its resourceVersion is recorded. m is the object's
// metadata unless the event is dropped. From a test double (isTestSource)
// any resourceVersion is accepted; the other checks stay.
func (r *Reflector) checkEvent(ctx context.Context, event watch.Event) (m metav1.Object, v eventVerdict) {
	if r.expectedType != nil {
		if got := reflect.TypeOf(event.Object); got != r.expectedType {
			r.reportError(ctx, fmt.Errorf("%s: dropped a watch %s event carrying a %v; this reflector stores only %v (is the ListerWatcher for the right resource?)",
				r.name, event.Type, got, r.expectedType))
			return nil, dropEvent
		}
	}
	if r.expectedGVK != nil {
		if got := event.Object.GetObjectKind().GroupVersionKind(); got != *r.expectedGVK {
			r.reportError(ctx, fmt.Errorf("%s: dropped a watch %s event carrying %v; this reflector stores only %v",
				r.name, event.Type, got, *r.expectedGVK))
			return nil, dropEvent
		}
	}
	m, err := meta.Accessor(event.Object)
	if err != nil {
		r.reportError(ctx, fmt.Errorf("%s: dropped a watch %s event whose object has no metadata: %w", r.name, event.Type, err))
		return nil, dropEvent
	}
	rv := m.GetResourceVersion()
	// A test double's objects carry whatever resourceVersion the test gave
	// them, usually none: taken as it comes, as upstream does (see
	// isTestSource).
	if !r.testSource && !validResourceVersion(rv) {
		// The object is refused, not applied. Its state cannot be placed
		// in time: applying it would hand handlers an object whose version
		// no later event can be compared with, and the relist this causes
		// brings the object's true state anyway. The RV is not recorded
		// either: an empty one would make the next re-watch start "from
		// now" with synthetic ADDED events and no relist, so a delete made
		// meanwhile would never arrive. Whatever else this stream carried
		// can no longer be trusted, so the watch ends and the cycle relists
		// from the last good RV. Upstream records the RV as it comes
		// (handleAnyWatch).
		r.reportError(ctx, fmt.Errorf("%s: refused a watch %s event for %s: its metadata.resourceVersion %q is not a decimal number; "+
			"the object was not applied and the resourceVersion not recorded; ending the watch and relisting from resourceVersion %q",
			r.name, event.Type, objectRef(m), rv, r.relistResourceVersion()))
		return m, endWatch
	}
	if m.GetName() == "" && event.Type != watch.Bookmark {
		// Without a name there is no key: stored, it would sit under ""
		// (or "ns/") and every nameless object would overwrite the last.
		// The event is refused; its RV is still recorded, because the
		// stream itself is sound and nothing was missed.
		r.reportError(ctx, fmt.Errorf("%s: refused a watch %s event for an object with no metadata.name (namespace %q, resourceVersion %s): "+
			"it cannot be keyed, so it never reaches the store or any handler; the watch goes on",
			r.name, event.Type, m.GetNamespace(), rv))
		return m, recordOnly
	}
	return m, storeEvent
}

// applyEvent stores a checked event in dst, reporting a store error to the
// WatchErrorHandler (the watch goes on). It returns whether the event shows
// the watch past its synthetic ADDED events (any but an ADDED), and whether
// it is the initial-events-end bookmark.
func (r *Reflector) applyEvent(ctx context.Context, dst ReflectorStore, event watch.Event, m metav1.Object) (pastSynthetic, initialEventsEnd bool) {
	var err error
	switch event.Type {
	case watch.Added:
		err = add(ctx, dst, event.Object)
	case watch.Modified:
		pastSynthetic = true
		err = update(ctx, dst, event.Object)
	case watch.Deleted:
		pastSynthetic = true
		// The event carries the object's last state; the store keeps it
		// only to compute the key (chapter 4 hands it on as the Deleted
		// delta's object).
		err = remove(ctx, dst, event.Object)
	case watch.Bookmark:
		// A bookmark changes no object: it only says "you are now at this
		// RV", so a later re-watch can start from here.
		pastSynthetic = true
		initialEventsEnd = m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
		// A store that takes the context (chapter 4's RealFIFO) records
		// the bookmark on this cycle's span.
		if b, ok := dst.(interface {
			BookmarkWithContext(context.Context, string) error
		}); ok {
			err = b.BookmarkWithContext(ctx, m.GetResourceVersion())
		} else if b, ok := dst.(ReflectorBookmarkStore); ok {
			err = b.Bookmark(m.GetResourceVersion())
		}
	default:
		err = fmt.Errorf("unknown watch event type %q", event.Type)
	}
	if err != nil {
		r.reportError(ctx, fmt.Errorf("%s: unable to apply watch %s event for %s/%s: %w",
			r.name, event.Type, m.GetNamespace(), m.GetName(), err))
	}
	return pastSynthetic, initialEventsEnd
}

// bookmarkWarningInterval is how often a watch-list stream still waiting for
// its initial-events-end bookmark is reported, as upstream's
// initialEventsEndBookmarkTicker warns (reflector.go), every 10 seconds.
const bookmarkWarningInterval = 10 * time.Second

// warnBookmarkOverdue reports a stream that has gone bookmarkWarningInterval
// without an event and without its initial-events-end bookmark: the
// informer cannot sync until it comes. Upstream logs the same warning; ours
// reaches the WatchErrorHandler and says what to do, because the usual cause
// is a server or fake client that ignores sendInitialEvents and so will
// never send the bookmark.
func (r *Reflector) warnBookmarkOverdue(ctx context.Context, start, lastEvent time.Time, count int) {
	switch {
	case lastEvent.IsZero():
		r.reportError(ctx, fmt.Errorf("%s: the watch-list stream of %v has sent no event in %v and no initial-events-end bookmark; "+
			"the informer cannot sync until it does. If this is a test double that ignores sendInitialEvents (a fake client), "+
			"make its ListerWatcher implement IsWatchListSemanticsUnSupported() returning true (as client-go's fakes do); "+
			"if it is a server or proxy that ignores it, switch the WatchListClient gate off (KUBE_FEATURE_WatchListClient=false) "+
			"or set ReflectorOptions.UseWatchList to false",
			r.name, r.typeDescription, time.Since(start).Round(time.Second)))
	case time.Since(lastEvent) >= bookmarkWarningInterval:
		r.reportError(ctx, fmt.Errorf("%s: the watch-list stream of %v sent %d events, the last %v ago, but not yet its initial-events-end bookmark; "+
			"the informer cannot sync until it does", r.name, r.typeDescription, count, time.Since(lastEvent).Round(time.Second)))
	}
}

// validResourceVersion: resourceVersions are opaque to clients by contract,
// but every API server backed by etcd sends a decimal revision, and the
// reflector hands them back in its next request. An empty or non-numeric
// one is a malformed event.
func validResourceVersion(rv string) bool {
	_, err := strconv.ParseUint(rv, 10, 64)
	return err == nil
}

// objectRef names an object as "namespace/name" for messages.
func objectRef(m metav1.Object) string {
	name := m.GetName()
	if name == "" {
		name = "(no name)"
	}
	if m.GetNamespace() == "" {
		return name
	}
	return m.GetNamespace() + "/" + name
}

package reflector

// The scripted server and the harness of watchlist_oracle_test.go: an
// in-process pod API that a reflector drives through a ListerWatcher, a store
// that records every call, and a player that steps a script in a synctest
// bubble, waiting before each step until the reflector has settled.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// oracleScheme converts ListOptions to the internal form the API server's
// own validation takes, so the scripted server accepts and refuses exactly
// the option combinations a kube-apiserver does.
var oracleScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(metainternalversion.AddToScheme(s))
	return s
}()

// watchBuffer bounds what one watch can hold unread. Scripts are small; a
// script that overflows it is reported as a problem, never silently cut.
const watchBuffer = 4096

// faultKind is what a scripted fault does to the request it matches.
type faultKind int

const (
	// failRequest answers the request with err (no watch is opened).
	failRequest faultKind = iota
	// errorEvent opens the watch, sends one ERROR event carrying err's
	// Status, and closes it: how a kube-apiserver answers a watch from a
	// compacted resourceVersion.
	errorEvent
	// cutStream sends only the first n initial events of a stream, then
	// closes it: no initial-events-end bookmark.
	cutStream
	// holdStream opens a stream and sends nothing, not even later writes
	// or bookmarks (a stuck server), until the script drops or expires it.
	holdStream
)

// fault is a one-shot answer for the next request of its verb.
type fault struct {
	// verb: "list", "watch" (a plain watch), or "stream" (a watch with
	// sendInitialEvents=true).
	verb string
	kind faultKind
	err  error
	n    int
}

func failNextWith(verb string, err error) fault {
	return fault{verb: verb, kind: failRequest, err: err}
}
func errorEventOnNext(verb string, err error) fault {
	return fault{verb: verb, kind: errorEvent, err: err}
}
func cutNextStreamAfter(n int) fault { return fault{verb: "stream", kind: cutStream, n: n} }
func holdNextStream() fault          { return fault{verb: "stream", kind: holdStream} }

func expired() error {
	return apierrors.NewResourceExpired("too old resource version")
}
func tooManyRequests() error { return apierrors.NewTooManyRequests("slow down", 1) }
func internalError() error   { return apierrors.NewInternalError(errors.New("scripted")) }

// scriptedServer is a tiny pod API server with etcd-like revisions: every
// write bumps the revision and becomes an event for the open watches. It
// answers LIST (paged by limit/continue), WATCH (synthetic ADDED events for
// resourceVersion "" or "0", a replay of history otherwise, an ERROR 410
// below the compaction point) and the streaming WATCH (sendInitialEvents:
// every object as ADDED, then a bookmark annotated initial-events-end at the
// current revision; compaction does not matter, as in the kube-apiserver's
// watch cache). It validates options with the kube-apiserver's own
// ValidateListOptions, so with refuseStreaming a stream request gets the 422
// Invalid "sendInitialEvents is forbidden for watch unless the WatchList
// feature gate is enabled" that a server with WatchList off sends.
type scriptedServer struct {
	mu              sync.Mutex
	rv              int64
	compacted       int64 // plain watches from below this get an ERROR 410
	pods            map[string]*corev1.Pod
	history         []watch.Event
	watches         []*scriptedWatch
	faults          []fault
	refuseStreaming bool
	log             []string
	problems        []string
}

func newScriptedServer() *scriptedServer {
	return &scriptedServer{rv: 10, pods: map[string]*corev1.Pod{}}
}

type scriptedWatch struct {
	s         *scriptedServer
	ch        chan watch.Event
	bookmarks bool
	held      bool
	closed    bool // guarded by s.mu
}

func (w *scriptedWatch) ResultChan() <-chan watch.Event { return w.ch }

// Stop is the client going away: the server forgets the watch.
func (w *scriptedWatch) Stop() {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.closeLocked()
}

func (w *scriptedWatch) closeLocked() {
	if w.closed {
		return
	}
	w.closed = true
	close(w.ch)
	w.s.watches = slices.DeleteFunc(w.s.watches, func(o *scriptedWatch) bool { return o == w })
}

func (w *scriptedWatch) sendLocked(ev watch.Event) {
	if w.closed {
		return
	}
	select {
	case w.ch <- ev:
	default:
		w.s.problems = append(w.s.problems, fmt.Sprintf("a watch buffer overflowed (%d unread events): shorten the script", watchBuffer))
	}
}

func (s *scriptedServer) openLocked(o metav1.ListOptions) *scriptedWatch {
	w := &scriptedWatch{s: s, ch: make(chan watch.Event, watchBuffer), bookmarks: o.AllowWatchBookmarks}
	s.watches = append(s.watches, w)
	return w
}

func (s *scriptedServer) takeFaultLocked(verb string) *fault {
	for i, f := range s.faults {
		if f.verb == verb {
			s.faults = slices.Delete(s.faults, i, i+1)
			return &f
		}
	}
	return nil
}

// sortedPodsLocked returns deep copies, in key order, so every stream and
// LIST is the same for both reflectors.
func (s *scriptedServer) sortedPodsLocked() []*corev1.Pod {
	keys := make([]string, 0, len(s.pods))
	for k := range s.pods {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*corev1.Pod, len(keys))
	for i, k := range keys {
		out[i] = s.pods[k].DeepCopy()
	}
	return out
}

func (s *scriptedServer) logLocked(verb string, o metav1.ListOptions, answer string, args ...any) {
	s.log = append(s.log, describeRequest(verb, o)+" → "+fmt.Sprintf(answer, args...))
}

// describeRequest is what the comparison sees of a request: every option a
// reflector sets, except the timeout's value (random by design).
func describeRequest(verb string, o metav1.ListOptions) string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(verb))
	fmt.Fprintf(&b, " rv=%q", o.ResourceVersion)
	if o.ResourceVersionMatch != "" {
		fmt.Fprintf(&b, " rvm=%s", o.ResourceVersionMatch)
	}
	if o.SendInitialEvents != nil {
		fmt.Fprintf(&b, " sendInitialEvents=%t", *o.SendInitialEvents)
	}
	if o.AllowWatchBookmarks {
		b.WriteString(" bookmarks")
	}
	if o.Limit != 0 {
		fmt.Fprintf(&b, " limit=%d", o.Limit)
	}
	if o.Continue != "" {
		fmt.Fprintf(&b, " continue=%q", o.Continue)
	}
	if o.TimeoutSeconds != nil {
		b.WriteString(" timeout")
	}
	if o.LabelSelector != "" || o.FieldSelector != "" {
		fmt.Fprintf(&b, " selectors=%q,%q", o.LabelSelector, o.FieldSelector)
	}
	return b.String()
}

func describeError(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return fmt.Sprintf("%d %s", st.Status().Code, st.Status().Reason)
	}
	return err.Error()
}

// validateLocked applies the kube-apiserver's option validation.
func (s *scriptedServer) validateLocked(isWatch bool, o metav1.ListOptions) error {
	var in metainternalversion.ListOptions
	if err := oracleScheme.Convert(&o, &in, nil); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	in.Watch = isWatch
	if errs := metainternalversionvalidation.ValidateListOptions(&in, !s.refuseStreaming); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return nil
}

func (s *scriptedServer) list(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.takeFaultLocked("list"); f != nil {
		s.logLocked("list", o, "%s", describeError(f.err))
		return nil, f.err
	}
	if err := s.validateLocked(false, o); err != nil {
		s.logLocked("list", o, "%s", describeError(err))
		return nil, err
	}
	pods := s.sortedPodsLocked()
	start := 0
	if o.Continue != "" {
		n, err := strconv.Atoi(o.Continue)
		if err != nil || n > len(pods) {
			err := apierrors.NewBadRequest("scripted server: bad continue token " + o.Continue)
			s.logLocked("list", o, "%s", describeError(err))
			return nil, err
		}
		start = n
	}
	end := len(pods)
	next := ""
	if o.Limit > 0 && int64(end-start) > o.Limit {
		end = start + int(o.Limit)
		next = strconv.Itoa(end)
	}
	out := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(s.rv, 10), Continue: next}}
	for _, p := range pods[start:end] {
		out.Items = append(out.Items, *p)
	}
	s.logLocked("list", o, "%d items @%d", len(out.Items), s.rv)
	return out, nil
}

func (s *scriptedServer) watch(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stream := o.SendInitialEvents != nil && *o.SendInitialEvents
	verb := "watch"
	if stream {
		verb = "stream"
	}
	if f := s.takeFaultLocked(verb); f != nil {
		switch f.kind {
		case failRequest:
			s.logLocked("watch", o, "%s", describeError(f.err))
			return nil, f.err
		case errorEvent:
			w := s.openLocked(o)
			w.sendLocked(errorEventOf(f.err))
			w.closeLocked()
			s.logLocked("watch", o, "ERROR event %s, closed", describeError(f.err))
			return w, nil
		case cutStream:
			w := s.openLocked(o)
			pods := s.sortedPodsLocked()
			n := min(f.n, len(pods))
			for _, p := range pods[:n] {
				w.sendLocked(watch.Event{Type: watch.Added, Object: p})
			}
			w.closeLocked()
			s.logLocked("watch", o, "%d of %d initial events, closed before the bookmark", n, len(pods))
			return w, nil
		case holdStream:
			w := s.openLocked(o)
			w.held = true
			s.logLocked("watch", o, "held open, nothing sent")
			return w, nil
		}
	}
	if err := s.validateLocked(true, o); err != nil {
		s.logLocked("watch", o, "%s", describeError(err))
		return nil, err
	}
	w := s.openLocked(o)
	if stream {
		pods := s.sortedPodsLocked()
		for _, p := range pods {
			w.sendLocked(watch.Event{Type: watch.Added, Object: p})
		}
		w.sendLocked(watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: strconv.FormatInt(s.rv, 10),
			Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}}})
		s.logLocked("watch", o, "%d initial events, bookmark @%d", len(pods), s.rv)
		return w, nil
	}
	switch o.ResourceVersion {
	case "", "0":
		pods := s.sortedPodsLocked()
		for _, p := range pods {
			w.sendLocked(watch.Event{Type: watch.Added, Object: p})
		}
		s.logLocked("watch", o, "%d synthetic ADDED", len(pods))
		return w, nil
	}
	from, err := strconv.ParseInt(o.ResourceVersion, 10, 64)
	if err != nil {
		w.closeLocked()
		err := apierrors.NewBadRequest("scripted server: resourceVersion is not a number: " + o.ResourceVersion)
		s.logLocked("watch", o, "%s", describeError(err))
		return nil, err
	}
	if from < s.compacted {
		w.sendLocked(errorEventOf(expired()))
		w.closeLocked()
		s.logLocked("watch", o, "ERROR event 410 Expired (compacted at %d), closed", s.compacted)
		return w, nil
	}
	replayed := 0
	for _, ev := range s.history {
		if rvOf(ev.Object) > from {
			w.sendLocked(watch.Event{Type: ev.Type, Object: ev.Object.DeepCopyObject()})
			replayed++
		}
	}
	s.logLocked("watch", o, "%d events replayed", replayed)
	return w, nil
}

func errorEventOf(err error) watch.Event {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		panic(fmt.Sprintf("scripted ERROR events need an API status error, got %v", err))
	}
	status := st.Status()
	return watch.Event{Type: watch.Error, Object: &status}
}

func rvOf(obj runtime.Object) int64 {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	n, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// write creates, updates or deletes pod a/name at a new revision and sends
// the event to every open watch that is not held.
func (s *scriptedServer) write(typ watch.EventType, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := "a/" + name
	old, exists := s.pods[key]
	if exists == (typ == watch.Added) {
		s.problems = append(s.problems, fmt.Sprintf("script bug: %s %s, which exists=%t", typ, key, exists))
		return
	}
	s.rv++
	rv := strconv.FormatInt(s.rv, 10)
	var p *corev1.Pod
	switch typ {
	case watch.Added:
		p = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name, ResourceVersion: rv}}
		s.pods[key] = p
	case watch.Modified:
		p = old.DeepCopy()
		p.ResourceVersion = rv
		p.Labels = map[string]string{"written-at": rv}
		s.pods[key] = p
	case watch.Deleted:
		p = old.DeepCopy()
		p.ResourceVersion = rv
		delete(s.pods, key)
	}
	ev := watch.Event{Type: typ, Object: p}
	s.history = append(s.history, ev)
	for _, w := range s.watches {
		if !w.held {
			w.sendLocked(watch.Event{Type: typ, Object: p.DeepCopy()})
		}
	}
}

func (s *scriptedServer) exists(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pods["a/"+name]
	return ok
}

// bumpRV is a write to some other resource: the revision moves, no pod event.
func (s *scriptedServer) bumpRV() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
}

// bookmark sends a plain bookmark at the current revision to every open
// watch that asked for bookmarks.
func (s *scriptedServer) bookmark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watches {
		if w.bookmarks && !w.held {
			w.sendLocked(watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				ResourceVersion: strconv.FormatInt(s.rv, 10)}}})
		}
	}
}

// drop closes every open watch, as a server restart or a proxy timeout does.
func (s *scriptedServer) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range slices.Clone(s.watches) {
		w.closeLocked()
	}
}

// expire compacts history up to now and ends every open watch with an
// ERROR 410 Expired event.
func (s *scriptedServer) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacted = s.rv
	for _, w := range slices.Clone(s.watches) {
		w.sendLocked(errorEventOf(expired()))
		w.closeLocked()
	}
}

func (s *scriptedServer) addFault(f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

func (s *scriptedServer) setRefuseStreaming(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseStreaming = v
}

// steady: the reflector reads exactly one open watch and has read all of it.
func (s *scriptedServer) steady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watches) == 1 && len(s.watches[0].ch) == 0
}

func (s *scriptedServer) snapshot() (log, problems []string, openWatches int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log), slices.Clone(s.problems), len(s.watches)
}

// storeLog is a ReflectorStore for both reflectors (their method sets are
// the same): a plain map plus a log of every call, objects written as
// namespace/name@resourceVersion, a "*" marking an object the reflector
// transformed, Replace's items sorted (client-go's temporary store lists in
// map order).
type storeLog struct {
	mu    sync.Mutex
	items map[string]*corev1.Pod
	calls []string
}

func newStoreLog() *storeLog { return &storeLog{items: map[string]*corev1.Pod{}} }

const transformedAnnotation = "oracle.test/transformed"

func podRef(obj any) (string, *corev1.Pod) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Sprintf("<%T>", obj), nil
	}
	ref := p.Namespace + "/" + p.Name + "@" + p.ResourceVersion
	if p.Annotations[transformedAnnotation] == "true" {
		ref += "*"
	}
	return ref, p
}

func (s *storeLog) one(call string, obj any, del bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, p := podRef(obj)
	s.calls = append(s.calls, call+" "+ref)
	if p == nil {
		return fmt.Errorf("storeLog holds pods, got %T", obj)
	}
	if del {
		delete(s.items, p.Namespace+"/"+p.Name)
	} else {
		s.items[p.Namespace+"/"+p.Name] = p
	}
	return nil
}

func (s *storeLog) Add(obj any) error    { return s.one("Add", obj, false) }
func (s *storeLog) Update(obj any) error { return s.one("Update", obj, false) }
func (s *storeLog) Delete(obj any) error { return s.one("Delete", obj, true) }

func (s *storeLog) Replace(list []any, rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	refs := make([]string, 0, len(list))
	s.items = map[string]*corev1.Pod{}
	for _, obj := range list {
		ref, p := podRef(obj)
		refs = append(refs, ref)
		if p != nil {
			s.items[p.Namespace+"/"+p.Name] = p
		}
	}
	slices.Sort(refs)
	s.calls = append(s.calls, fmt.Sprintf("Replace [%s] rv=%s", strings.Join(refs, " "), rv))
	return nil
}

func (s *storeLog) Resync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "Resync")
	return nil
}

func (s *storeLog) Bookmark(rv string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "Bookmark "+rv)
	return nil
}

func (s *storeLog) contents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.items))
	for _, p := range s.items {
		ref, _ := podRef(p)
		out = append(out, ref)
	}
	slices.Sort(out)
	return out
}

func (s *storeLog) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// markTransformed is the transformer of the TransformingStore scenario:
// idempotent, and on a copy, so the server's objects stay as they were.
func markTransformed(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	p = p.DeepCopy()
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[transformedAnnotation] = "true"
	return p, nil
}

// oursTransformingStore advertises a transformer to our reflector.
// ADAPT: the return type must be the one our TransformingStore-like
// interface names (upstream: cache.TransformFunc); if ours names another
// type, change it here, or this store is not seen as transforming.
type oursTransformingStore struct{ *storeLog }

func (oursTransformingStore) Transformer() store.TransformFunc { return markTransformed }

// theirsTransformingStore is a kcache.TransformingStore.
type theirsTransformingStore struct{ *storeLog }

func (theirsTransformingStore) Transformer() kcache.TransformFunc { return markTransformed }

var _ kcache.TransformingStore = theirsTransformingStore{}

// oursOptOutLW and theirsOptOutLW are ListerWatchers with the method
// client-go's reflector looks for (util/watchlist.DoesClientNotSupportWatchListSemantics).
type oursOptOutLW struct {
	*ListWatch
	unsupported bool
}

func (l oursOptOutLW) IsWatchListSemanticsUnSupported() bool { return l.unsupported }

type theirsOptOutLW struct {
	*kcache.ListWatch
	unsupported bool
}

func (l theirsOptOutLW) IsWatchListSemanticsUnSupported() bool { return l.unsupported }

// listFirst switches our reflector to the classic LIST-then-WATCH path: what
// client-go does with its WatchListClient gate off.
func setListFirst(opts *ReflectorOptions) { opts.UseWatchList = new(false) }

// oracleConfig is how a scenario builds the reflector under test.
type oracleConfig struct {
	// optOut, if set, wraps the ListWatch in a type whose
	// IsWatchListSemanticsUnSupported returns *optOut.
	optOut *bool
	// gateOff: ours through listFirst; client-go's gate must be switched
	// off by the caller (SetFeatureDuringTest, outside any bubble).
	gateOff bool
	// transform: the store advertises a transformer.
	transform bool
}

type reflectorFlavour string

const (
	clientGoReflector reflectorFlavour = "client-go"
	ourReflector      reflectorFlavour = "ours"
)

// subject is a running reflector, whichever it is.
type subject struct {
	run        func(ctx context.Context)
	lastSyncRV func() string
}

// oracleBackoff is the same fast, jitter-free pacing for both reflectors.
func oracleBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: fastBackoff.Duration, Factor: fastBackoff.Factor, Cap: fastBackoff.Cap, Steps: 100}
}

func newSubject(flavour reflectorFlavour, s *scriptedServer, st *storeLog, cfg oracleConfig) subject {
	switch flavour {
	case ourReflector:
		lw := &ListWatch{ListWithContextFunc: s.list, WatchFuncWithContext: s.watch}
		var l ListerWatcher = lw
		if cfg.optOut != nil {
			l = oursOptOutLW{ListWatch: lw, unsupported: *cfg.optOut}
		}
		var rs ReflectorStore = st
		if cfg.transform {
			rs = oursTransformingStore{st}
		}
		opts := ReflectorOptions{Name: "oracle", Backoff: fastBackoff}
		if cfg.gateOff {
			setListFirst(&opts)
		}
		r := NewReflectorWithOptions(l, &corev1.Pod{}, rs, opts)
		// Ours reports more than upstream (see errors.go); the oracle
		// compares requests and state, not reports.
		r.SetWatchErrorHandler(func(*Reflector, error) {})
		return subject{run: r.RunWithContext, lastSyncRV: r.LastSyncResourceVersion}
	case clientGoReflector:
		lw := &kcache.ListWatch{ListWithContextFunc: s.list, WatchFuncWithContext: s.watch}
		var l kcache.ListerWatcher = lw
		if cfg.optOut != nil {
			l = theirsOptOutLW{ListWatch: lw, unsupported: *cfg.optOut}
		}
		var rs kcache.ReflectorStore = st
		if cfg.transform {
			rs = theirsTransformingStore{st}
		}
		r := kcache.NewReflectorWithOptions(l, &corev1.Pod{}, rs, kcache.ReflectorOptions{Name: "oracle", Backoff: oracleBackoff()})
		return subject{run: r.RunWithContext, lastSyncRV: r.LastSyncResourceVersion}
	}
	panic("unknown reflector " + flavour)
}

// transcript is everything the oracle compares.
type transcript struct {
	// Requests: each request as the server saw it, and its answer.
	Requests []string
	// Store: every call the reflector made on its store.
	Store []string
	// Checkpoints: at each named point of the script, once the reflector
	// settled, its LastSyncResourceVersion and its store's contents.
	Checkpoints []string
	// Problems: the script or the server went wrong (never expected).
	Problems []string
}

// player steps a script against one reflector.
type player struct {
	s           *scriptedServer
	st          *storeLog
	sub         subject
	checkpoints []string
	stuck       bool
}

// settleSteps bounds the wait for a steady state: 5ms of fake time each, so
// 4,000 is 20 fake seconds, far more than any fast backoff needs.
const settleSteps = 4000

// settle waits until the reflector is blocked reading exactly one open watch
// that it has read to the end. Each step lets every goroutine of the bubble
// block (synctest.Wait), then moves fake time on 5ms so backoffs run out.
// Writes, drops and faults are only ever made in that state, so both
// reflectors meet them at the same point of their conversation, whatever
// their backoff delays.
func (p *player) settle() {
	if p.stuck {
		return
	}
	for range settleSteps {
		synctest.Wait()
		if p.s.steady() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, _, open := p.s.snapshot()
	p.stuck = true
	p.checkpoints = append(p.checkpoints, fmt.Sprintf("NEVER SETTLED (open watches %d, rv=%q)", open, p.sub.lastSyncRV()))
}

func (p *player) check(label string) {
	p.settle()
	p.checkpoints = append(p.checkpoints, fmt.Sprintf("%s: rv=%q cache=[%s]", label, p.sub.lastSyncRV(), strings.Join(p.st.contents(), " ")))
}

func (p *player) create(name string) { p.settle(); p.s.write(watch.Added, name) }
func (p *player) update(name string) { p.settle(); p.s.write(watch.Modified, name) }
func (p *player) remove(name string) { p.settle(); p.s.write(watch.Deleted, name) }

// bookmarkAhead moves the revision with a write elsewhere and sends a
// bookmark at it.
func (p *player) bookmarkAhead() { p.settle(); p.s.bumpRV(); p.s.bookmark() }

// dropNow closes the open watch at once: if nothing came through it since
// it opened, that is less than a second with no events.
func (p *player) dropNow() { p.settle(); p.s.drop() }

// dropQuiet lets two quiet seconds pass, then closes the open watch: never
// a "very short" watch.
func (p *player) dropQuiet() { p.settle(); time.Sleep(2 * time.Second); p.s.drop() }

func (p *player) expire() { p.settle(); p.s.expire() }

// next queues a one-shot fault for the next matching request.
func (p *player) next(f fault) { p.settle(); p.s.addFault(f) }

func (p *player) refuseStreaming(v bool) { p.settle(); p.s.setRefuseStreaming(v) }

// scenario is a script: prepare runs before the reflector starts, steps
// while it runs.
type scenario struct {
	prepare func(s *scriptedServer)
	steps   func(p *player)
}

// seedPods is a prepare step: pods p0..p<n-1>.
func seedPods(n int) func(s *scriptedServer) {
	return func(s *scriptedServer) {
		for i := range n {
			s.write(watch.Added, fmt.Sprint("p", i))
		}
	}
}

// play runs sc against one reflector in a synctest bubble and returns what
// happened.
func play(t *testing.T, flavour reflectorFlavour, cfg oracleConfig, sc scenario) transcript {
	t.Helper()
	var tr transcript
	synctest.Test(t, func(t *testing.T) {
		s := newScriptedServer()
		if sc.prepare != nil {
			sc.prepare(s)
		}
		st := newStoreLog()
		sub := newSubject(flavour, s, st, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); sub.run(ctx) }()
		p := &player{s: s, st: st, sub: sub}
		sc.steps(p)
		p.check("end")
		cancel()
		<-done
		log, problems, _ := s.snapshot()
		tr = transcript{Requests: log, Store: st.snapshot(), Checkpoints: p.checkpoints, Problems: problems}
	})
	return tr
}

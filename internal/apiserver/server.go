package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// DefaultHistoryLimit is Options.HistoryLimit's default.
const DefaultHistoryLimit = 1000

// Options configures a Server. The zero value is usable.
type Options struct {
	// Addr is where to listen; default "127.0.0.1:0" (a free loopback port).
	Addr string
	// HistoryLimit is how many past events are kept for watches that start
	// from a resourceVersion; older ones are compacted away. Default
	// DefaultHistoryLimit.
	HistoryLimit int
	// BookmarkInterval, if set, sends a BOOKMARK to every watch that allows
	// them at this interval. Zero sends bookmarks only on SendBookmarks and at
	// the end of a watch-list's initial events.
	BookmarkInterval time.Duration
	// DisableWatchList makes the server answer as a kube-apiserver whose
	// WatchList feature gate is off (--feature-gates=WatchList=false): a
	// WATCH that asks for sendInitialEvents is refused with 422 Invalid, the
	// answer on which a streaming client falls back to LIST. The zero value
	// streams, as kube-apiserver does by default since 1.34.
	// [Server.SetWatchListEnabled] switches it while the server runs.
	DisableWatchList bool
}

// Server is the embedded API server. Create one with [Start].
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:41234.
	URL  string
	opts Options
	addr string

	httpMu  sync.Mutex // guards httpSrv and ln across Stop and Restart
	httpSrv *http.Server
	// ln is closed by Stop itself: http.Server.Close closes only the
	// listeners Serve has begun to track, and a Serve goroutine not yet
	// started would keep the port bound, failing an immediate Restart.
	ln net.Listener

	mu sync.Mutex
	// Guarded by mu:

	rv int64 // the last resourceVersion handed out
	// compactedRV: a watch may start at any RV >= compactedRV; history holds
	// every event with a larger RV.
	compactedRV int64
	objects     map[schema.GroupVersionResource]map[string]runtime.Object // key: ns/name
	history     []event
	watchers    map[*watcher]struct{}
	faults      []*fault
	releases    []func() // of every StallNext, for ClearFaults
	snapshots   map[string]*snapshot
	snapshotID  int64 // the last snapshot's ID: IDs are never reused
	requests    []Request
	uid         int64
	// watchList is the WatchList feature gate as this server sees it: read
	// by every LIST and WATCH when it validates its options.
	watchList bool
}

// event is one change, as stored in history and sent to watchers.
type event struct {
	res  Resource
	typ  watch.EventType
	rv   int64
	obj  runtime.Object // the object after the change (for DELETED: as deleted, with the deletion RV)
	prev runtime.Object // the object before the change, nil for ADDED
	raw  []byte         // set only by InjectRawWatchData: bytes sent as they are
}

// Request is one request a client made, as recorded for tests.
type Request struct {
	Verb      string // list, watch, get, create, update, delete
	Resource  string
	Namespace string
	Name      string
	Query     url.Values

	// The options that tell a streaming WATCH (a watch-list:
	// sendInitialEvents=true, resourceVersionMatch=NotOlderThan,
	// allowWatchBookmarks=true) from a plain one, decoded from Query; set
	// for list and watch only. SendInitialEvents is nil when the client did
	// not send it, which the server treats differently from false.
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	SendInitialEvents    *bool
	AllowWatchBookmarks  bool

	// Fault is the status code an injected fault answered with, or 0.
	Fault int
	// Refused is the status code the server itself answered with when it
	// rejected the request's options as kube-apiserver does, or 0: 422 for
	// a streaming WATCH while watch-list is off (see
	// [Server.SetWatchListEnabled]) or for options no kube-apiserver accepts.
	Refused int
}

// IsWatchList reports whether r is a streaming WATCH as client-go's
// reflector opens it: sendInitialEvents=true with
// resourceVersionMatch=NotOlderThan and bookmarks allowed.
func (r Request) IsWatchList() bool {
	return r.Verb == "watch" && r.SendInitialEvents != nil && *r.SendInitialEvents &&
		r.ResourceVersionMatch == metav1.ResourceVersionMatchNotOlderThan && r.AllowWatchBookmarks
}

// Start starts a server on a loopback port. Stop it with [Server.Stop] (or
// t.Cleanup(s.Stop)).
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.HistoryLimit <= 0 {
		opts.HistoryLimit = DefaultHistoryLimit
	}
	s := &Server{
		// Like etcd, an empty store is already at revision 1, so a LIST never
		// reports resourceVersion "0" (which means "any" to a client, and
		// would make its next watch start over with synthetic ADDED events).
		rv:        1,
		opts:      opts,
		objects:   map[schema.GroupVersionResource]map[string]runtime.Object{},
		watchers:  map[*watcher]struct{}{},
		snapshots: map[string]*snapshot{},
		watchList: !opts.DisableWatchList,
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("embedded API server: listen on %s: %w", opts.Addr, err)
	}
	s.addr = ln.Addr().String()
	s.URL = "http://" + s.addr
	s.serve(ln)
	return s, nil
}

func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.ServeHTTP), ReadHeaderTimeout: 10 * time.Second}
	s.httpMu.Lock()
	s.httpSrv, s.ln = srv, ln
	s.httpMu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// Config returns a client configuration for the server.
func (s *Server) Config() *rest.Config {
	return &rest.Config{Host: s.URL, QPS: -1} // no client-side rate limit in tests
}

// Stop closes the listener and every connection: clients get "connection
// refused" until Restart, in process (List, Watch) as over HTTP. Open
// watches end.
func (s *Server) Stop() {
	s.httpMu.Lock()
	srv, ln := s.httpSrv, s.ln
	s.httpSrv, s.ln = nil, nil
	s.httpMu.Unlock()
	if srv != nil {
		_ = srv.Close()
		_ = ln.Close()
	}
	s.CloseWatches()
}

// Restart listens again on the same address after Stop; the stored objects
// and history are kept, as a restarted kube-apiserver keeps etcd's.
func (s *Server) Restart() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("embedded API server: listen again on %s: %w", s.addr, err)
	}
	s.serve(ln)
	return nil
}

// ResourceVersion is the last resourceVersion handed out.
func (s *Server) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.FormatInt(s.rv, 10)
}

// Requests returns what clients asked for so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ---- writes ----

// Create stores a new object and returns it as stored (resourceVersion, uid
// and creationTimestamp set).
func (s *Server) Create(obj runtime.Object) (runtime.Object, error) {
	res, err := resourceOf(obj)
	if err != nil {
		return nil, err
	}
	return s.create(res, obj)
}

func (s *Server) create(res Resource, obj runtime.Object) (runtime.Object, error) {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if m.GetName() == "" {
		return nil, apierrors.NewInvalid(res.GVK().GroupKind(), "", nil)
	}
	if res.Namespaced && m.GetNamespace() == "" {
		m.SetNamespace(metav1.NamespaceDefault)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := keyOf(m)
	if _, exists := s.objects[res.GVR][key]; exists {
		return nil, apierrors.NewAlreadyExists(res.GVR.GroupResource(), m.GetName())
	}
	s.uid++
	m.SetUID(types.UID(fmt.Sprintf("uid-%d", s.uid)))
	m.SetCreationTimestamp(metav1.Now())
	s.write_locked(res, watch.Added, key, obj, nil)
	return obj.DeepCopyObject(), nil
}

// Update replaces an existing object. A non-empty resourceVersion in obj must
// match the stored one (optimistic concurrency), or the update is a Conflict.
func (s *Server) Update(obj runtime.Object) (runtime.Object, error) {
	res, err := resourceOf(obj)
	if err != nil {
		return nil, err
	}
	return s.update(res, obj)
}

func (s *Server) update(res Resource, obj runtime.Object) (runtime.Object, error) {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if res.Namespaced && m.GetNamespace() == "" {
		m.SetNamespace(metav1.NamespaceDefault)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := keyOf(m)
	old, exists := s.objects[res.GVR][key]
	if !exists {
		return nil, apierrors.NewNotFound(res.GVR.GroupResource(), m.GetName())
	}
	oldMeta, _ := meta.Accessor(old)
	if rv := m.GetResourceVersion(); rv != "" && rv != oldMeta.GetResourceVersion() {
		return nil, apierrors.NewConflict(res.GVR.GroupResource(), m.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	m.SetUID(oldMeta.GetUID())
	m.SetCreationTimestamp(oldMeta.GetCreationTimestamp())
	s.write_locked(res, watch.Modified, key, obj, old)
	return obj.DeepCopyObject(), nil
}

// Delete removes an object.
func (s *Server) Delete(res Resource, namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := storeKey(namespace, name)
	old, exists := s.objects[res.GVR][key]
	if !exists {
		return apierrors.NewNotFound(res.GVR.GroupResource(), name)
	}
	gone := old.DeepCopyObject()
	s.write_locked(res, watch.Deleted, key, gone, old)
	return nil
}

// Get returns a copy of a stored object.
func (s *Server) Get(res Resource, namespace, name string) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := storeKey(namespace, name)
	obj, ok := s.objects[res.GVR][key]
	if !ok {
		return nil, apierrors.NewNotFound(res.GVR.GroupResource(), name)
	}
	return obj.DeepCopyObject(), nil
}

// write_locked gives the change the next resourceVersion, applies it,
// records it in history and offers it to every watcher.
func (s *Server) write_locked(res Resource, typ watch.EventType, key string, obj, prev runtime.Object) {
	s.rv++
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	if s.objects[res.GVR] == nil {
		s.objects[res.GVR] = map[string]runtime.Object{}
	}
	if typ == watch.Deleted {
		delete(s.objects[res.GVR], key)
	} else {
		s.objects[res.GVR][key] = obj
	}
	ev := event{res: res, typ: typ, rv: s.rv, obj: obj, prev: prev}
	s.history = append(s.history, ev)
	if over := len(s.history) - s.opts.HistoryLimit; over > 0 {
		s.compactedRV = s.history[over-1].rv
		// Reslice rather than shift: shifting moved HistoryLimit events on
		// every write (150,000 creates with the default limit moved 150
		// million). The dropped slots are cleared so that they pin no
		// object, and append copies the live part to a new array when the
		// old one fills, so memory stays a small multiple of the limit.
		clear(s.history[:over])
		s.history = s.history[over:]
	}
	for w := range s.watchers {
		w.offer_locked(ev)
	}
}

func keyOf(m metav1.Object) string { return storeKey(m.GetNamespace(), m.GetName()) }

// storeKey is the "namespace/name" (or "name") key objects are kept under,
// the same shape as the informer's cache keys (chapter 1).
func storeKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// ---- list ----

// snapshot is a paginated list in progress: the items as of one RV, sorted by
// key, served page by page through continue tokens.
type snapshot struct {
	id    int64
	rv    int64
	items []runtime.Object
}

// MaxSnapshots is how many paginated lists in progress the server keeps:
// a snapshot is dropped when its last page is served, and the oldest when
// a new one would make more than this many (a client that stopped paging).
// Each pins its objects' versions as of its list, which at 150,000 objects
// is the whole store's worth once they have all changed: kept forever, as
// before, every relist of a paging client added one. A continue token of a
// dropped snapshot gets 410 Expired, as a real server's does once etcd has
// compacted its revision, and client-go's pager then lists again in full.
const MaxSnapshots = 8

type continueToken struct {
	ID   string `json:"id"`
	RV   int64  `json:"rv"`
	Next int    `json:"next"`
}

// List serves a LIST in process; the HTTP handler calls it too. The result is
// the resource's typed list (e.g. *corev1.PodList).
func (s *Server) List(ctx context.Context, res Resource, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
	if err := s.refuseIfStopped(); err != nil {
		return nil, err
	}
	if err := s.admit(ctx, "list", res, namespace, "", listQuery(opts), &opts); err != nil {
		return nil, err
	}
	return s.list(res, namespace, opts)
}

func (s *Server) list(res Resource, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
	sel, fsel, err := selectors(res, opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()

	var snap *snapshot
	var tok continueToken
	if opts.Continue != "" {
		raw, err := base64.RawURLEncoding.DecodeString(opts.Continue)
		if err == nil {
			err = json.Unmarshal(raw, &tok)
		}
		if err != nil {
			return nil, apierrors.NewBadRequest("continue key is not valid: " + opts.Continue)
		}
		snap = s.snapshots[tok.ID]
		if snap == nil || tok.RV < s.compactedRV || snap.rv != tok.RV {
			// The real server's wording; the pager falls back to a full list on it.
			return nil, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
		}
	} else {
		if rv := opts.ResourceVersion; rv != "" && rv != "0" {
			n, err := strconv.ParseInt(rv, 10, 64)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv))
			}
			if n > s.rv {
				return nil, tooLargeRV(n, s.rv)
			}
			if opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact && n != s.rv {
				return nil, apierrors.NewBadRequest("the embedded API server serves resourceVersionMatch=Exact only at the current resourceVersion")
			}
		}
		// "" and "0" serve the current state, as does a not-older-than RV:
		// the current state is never older than an RV we have handed out.
		snap = &snapshot{rv: s.rv, items: s.matching_locked(res, namespace, sel, fsel)}
	}

	list := res.newList()
	page := snap.items[min(tok.Next, len(snap.items)):]
	lm, _ := meta.ListAccessor(list)
	lm.SetResourceVersion(strconv.FormatInt(snap.rv, 10))
	if opts.Limit > 0 && int64(len(page)) > opts.Limit {
		page = page[:opts.Limit]
		id := tok.ID
		if id == "" {
			s.snapshotID++
			snap.id = s.snapshotID
			id = strconv.FormatInt(snap.id, 10)
			s.keepSnapshot_locked(id, snap)
		}
		raw, _ := json.Marshal(continueToken{ID: id, RV: snap.rv, Next: tok.Next + len(page)})
		lm.SetContinue(base64.RawURLEncoding.EncodeToString(raw))
		remaining := int64(len(snap.items) - tok.Next - len(page))
		lm.SetRemainingItemCount(&remaining)
	} else if tok.ID != "" {
		// The last page: nothing will ask for this snapshot again.
		delete(s.snapshots, tok.ID)
	}
	s.mu.Unlock()
	locked = false
	// Stored objects are never changed in place (a write stores a new
	// object), so the copies are made outside the lock: a page of a
	// 150,000-object list copied under it held every writer and watch.
	items := make([]runtime.Object, len(page))
	for i, o := range page {
		items[i] = o.DeepCopyObject()
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return list, nil
}

// keepSnapshot_locked files snap under id, dropping the oldest snapshot if
// that makes more than MaxSnapshots.
func (s *Server) keepSnapshot_locked(id string, snap *snapshot) {
	s.snapshots[id] = snap
	if len(s.snapshots) <= MaxSnapshots {
		return
	}
	oldest := ""
	for k, sn := range s.snapshots {
		if oldest == "" || sn.id < s.snapshots[oldest].id {
			oldest = k
		}
	}
	delete(s.snapshots, oldest)
}

func tooLargeRV(asked, current int64) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", asked, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
	}}
	return err
}

func selectors(res Resource, opts metav1.ListOptions) (labels.Selector, fields.Selector, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse labelSelector %q: %v", opts.LabelSelector, err))
	}
	fsel, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse fieldSelector %q: %v", opts.FieldSelector, err))
	}
	for _, r := range fsel.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s (the embedded API server knows metadata.name and metadata.namespace)", r.Field))
		}
	}
	return sel, fsel, nil
}

// matching_locked returns the stored objects of res in namespace ("" for
// all) that match both selectors, in key order: what a LIST serves, and what
// a watch sends as its initial events.
func (s *Server) matching_locked(res Resource, namespace string, sel labels.Selector, fsel fields.Selector) []runtime.Object {
	keys := make([]string, 0, len(s.objects[res.GVR]))
	for k := range s.objects[res.GVR] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []runtime.Object
	for _, k := range keys {
		obj := s.objects[res.GVR][k]
		if matches(obj, namespace, sel, fsel) {
			out = append(out, obj)
		}
	}
	return out
}

func matches(obj runtime.Object, namespace string, sel labels.Selector, fsel fields.Selector) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if namespace != "" && m.GetNamespace() != namespace {
		return false
	}
	return sel.Matches(labels.Set(m.GetLabels())) &&
		fsel.Matches(fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()})
}

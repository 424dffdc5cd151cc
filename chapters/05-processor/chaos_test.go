package processor_test

// A chaos test of the whole informer: random pod writes mixed with every
// fault the embedded API server offers, under fixed seeds. Whatever happened
// on the way, once the writes stop and the faults are cleared the informer
// must converge: its cache equals the server, each handler's view (rebuilt
// from its own OnAdd/OnUpdate/OnDelete calls) equals the cache, no handler
// ever saw a resourceVersion go backwards for a key, and no handler ever saw
// an object the reflector should have refused. It runs on both queues the
// informer offers (the RealFIFO and the DeltaFIFO).
//
// It runs in a testing/synctest bubble against the server's in-process face
// (Server.List and Server.Watch): time is fake, so the reflector's real
// backoff (800ms doubling to 30s, which chapter 5 does not let a caller
// change) costs no wall-clock time, and a seed runs in well under a second
// of real time. A goroutine blocked on a socket would never be "durably
// blocked", which is why HTTP is not used here; the in-process face honours
// Stop/Restart by refusing connections, as the HTTP face does.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// The fault kinds the chaos driver mixes in; chaosFault applies one.
const (
	faultListStatus      = iota // Inject a LIST fault: 403, 410, 429, 500 or 503
	faultListTooLarge           // Inject a LIST 504 "Too large resource version"
	faultWatchStatus            // Inject a WATCH fault: 403, 410, 429, 500, 503 or 504
	faultAnyVerb                // Inject a fault for every verb
	faultStallList              // StallNext("list")
	faultStallWatch             // StallNext("watch")
	faultRelease                // release one held request
	faultCloseWatches           // CloseWatches
	faultCompact                // Compact
	faultCompactAndClose        // Compact, then CloseWatches: the re-watch gets 410
	faultStopOrRestart          // Stop, or Restart if stopped
	faultBookmarks              // SendBookmarks
	faultWrongType              // a ConfigMap on the pod watch
	faultErrorEvent             // an ERROR event: 410 or 500
	faultNameless               // a pod with no name, ADDED, MODIFIED or DELETED
	faultBadRV                  // a pod event with an empty or non-numeric resourceVersion
	faultRawData                // undecodable bytes on the stream
	faultKinds
)

func TestChaosInformerConvergesUnderEveryFault(t *testing.T) {
	used := make([]int, faultKinds)
	for _, queue := range []processor.QueueKind{processor.RealFIFOQueue, processor.DeltaFIFOQueue} {
		for _, seed := range []uint64{1, 2, 3, 4, 5} {
			t.Run(fmt.Sprintf("%v/seed=%d", queue, seed), func(t *testing.T) {
				for k, n := range chaosRun(t, queue, seed) {
					used[k] += n
				}
			})
		}
	}
	for k, n := range used {
		assert.Positive(t, n, "fault kind %d was never used: the seeds no longer cover every fault", k)
	}
}

// chaosRun runs one seed and returns how often each fault kind was used.
func chaosRun(t *testing.T, queue processor.QueueKind, seed uint64) []int {
	srv, err := apiserver.Start(apiserver.Options{HistoryLimit: 40, BookmarkInterval: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)

	// Restart starts an HTTP Serve goroutine blocked in Accept; started
	// inside the bubble it would keep the bubble from ever being idle. So
	// the bubble asks a goroutine outside it to restart the server, and
	// waits on restartDone. Both channels are made outside the bubble: a
	// bubble goroutine blocked on one is not durably blocked, so fake time
	// stands still until the real-time Restart is done. (Polling in fake
	// time instead let ten fake minutes pass in microseconds while a loaded
	// machine was still restarting, and the test failed now and then.)
	restartReq := make(chan struct{})
	restartDone := make(chan struct{})
	var restartErr error
	var restartMu sync.Mutex
	go func() {
		for range restartReq {
			err := srv.Restart()
			restartMu.Lock()
			restartErr = err
			restartMu.Unlock()
			restartDone <- struct{}{}
		}
	}()
	t.Cleanup(func() { close(restartReq) })

	used := make([]int, faultKinds)
	synctest.Test(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(seed, 10))
		inf := processor.NewSharedIndexInformerWithOptions(srv.ListerWatcher(apiserver.Pods, metav1.NamespaceAll), &corev1.Pod{}, processor.SharedIndexInformerOptions{Queue: queue})
		var reportMu sync.Mutex
		var reports []string
		require.NoError(t, inf.SetWatchErrorHandler(func(_ *reflector.Reflector, err error) {
			reportMu.Lock()
			defer reportMu.Unlock()
			reports = append(reports, err.Error())
		}))
		defer func() {
			if t.Failed() {
				reportMu.Lock()
				defer reportMu.Unlock()
				t.Logf("the WatchErrorHandler heard:\n%s", strings.Join(reports, "\n"))
			}
		}()
		early, resyncing, late := newChaosView("early"), newChaosView("resync every 2s"), newChaosView("added late")
		regEarly, err := inf.AddEventHandler(early)
		require.NoError(t, err)
		regResync, err := inf.AddEventHandlerWithResyncPeriod(resyncing, 2*time.Second)
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		chaosWaitFor(t, "initial sync", func() bool { return regEarly.HasSynced() && regResync.HasSynced() })

		d := &chaosDriver{t: t, srv: srv, rng: rng, restartReq: restartReq, restartDone: restartDone}
		const steps = 300
		for step := range steps {
			if step == steps/3 {
				_, err := inf.AddEventHandler(late)
				require.NoError(t, err)
			}
			d.releaseDue(step)
			// Steps of up to 4 fake seconds: long enough for the reflector to
			// get through its backoff (capped at 30s) and fail again many
			// times per seed, instead of sleeping through most faults.
			time.Sleep(time.Duration(rng.IntN(4000)) * time.Millisecond)
			d.step = step
			if rng.IntN(100) < 60 {
				d.write()
				continue
			}
			k := rng.IntN(faultKinds)
			used[k]++
			d.fault(k)
		}

		// The writes stop and the faults are cleared: now it must converge.
		srv.ClearFaults()
		if d.stopped {
			d.restart()
		}
		restartMu.Lock()
		require.NoError(t, restartErr)
		restartMu.Unlock()

		var server, cache map[string]string
		views := map[string]map[string]string{}
		converged := func() bool {
			list, err := srv.List(context.Background(), apiserver.Pods, "", metav1.ListOptions{})
			require.NoError(t, err)
			server = map[string]string{}
			for _, p := range list.(*corev1.PodList).Items {
				server[p.Namespace+"/"+p.Name] = p.ResourceVersion
			}
			cache = map[string]string{}
			for _, obj := range inf.GetStore().List() {
				p := obj.(*corev1.Pod)
				cache[p.Namespace+"/"+p.Name] = p.ResourceVersion
			}
			ok := maps.Equal(server, cache)
			for _, v := range []*chaosView{early, resyncing, late} {
				views[v.name] = v.state()
				ok = ok && maps.Equal(views[v.name], cache)
			}
			return ok
		}
		// A generous deadline in fake time: the reflector may be backing
		// off for up to a minute (30s capped delay plus jitter) when the
		// faults stop.
		chaosWaitFor(t, "cache == server and every handler's view == cache", converged)
		assert.Equal(t, server, cache, "cache == server")
		for _, v := range []*chaosView{early, resyncing, late} {
			assert.Equal(t, cache, views[v.name], "handler %q's view == cache", v.name)
			assert.Empty(t, v.violations(), "handler %q", v.name)
		}
		reportMu.Lock()
		n := len(reports)
		reportMu.Unlock()
		assert.Positive(t, n, "the faults reached the WatchErrorHandler")
		t.Logf("seed %d: %d pods, %d reports, faults used %v", seed, len(server), n, used)
	})
	return used
}

// chaosWaitFor polls cond in fake time until it holds, or fails after ten
// fake minutes. Not a timing assertion: the limit only turns a bug into a
// failure instead of a hang.
func chaosWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not reached within 10 fake minutes: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chaosDriver makes the random writes and faults of one seed.
type chaosDriver struct {
	t           *testing.T
	srv         *apiserver.Server
	rng         *rand.Rand
	step        int
	held        []heldRequest
	stopped     bool
	restartReq  chan<- struct{}
	restartDone <-chan struct{}
}

var chaosNamespaces = []string{"blue", "green"}

func (d *chaosDriver) randomPod() (ns, name string) {
	return chaosNamespaces[d.rng.IntN(len(chaosNamespaces))], "p" + strconv.Itoa(d.rng.IntN(12))
}

// write creates, updates or deletes a random pod, straight on the server's
// store (writes take no faults: the faults are for the informer's reads).
func (d *chaosDriver) write() {
	ns, name := d.randomPod()
	obj, err := d.srv.Get(apiserver.Pods, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		_, err = d.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{"gen": "0"}}})
	case err != nil:
	case d.rng.IntN(3) == 0:
		err = d.srv.Delete(apiserver.Pods, ns, name)
	default:
		p := obj.(*corev1.Pod)
		p.Labels["gen"] = strconv.Itoa(d.rng.IntN(1000))
		_, err = d.srv.Update(p)
	}
	require.NoError(d.t, err)
}

// heldRequest is a StallNext not yet released, and the step at which the
// driver lets it go: a few steps later, or earlier by faultRelease.
type heldRequest struct {
	release func()
	due     int
}

func (d *chaosDriver) stall(verb string) {
	d.held = append(d.held, heldRequest{d.srv.StallNext(verb), d.step + 1 + d.rng.IntN(8)})
}

func (d *chaosDriver) releaseDue(step int) {
	d.held = slices.DeleteFunc(d.held, func(h heldRequest) bool {
		if h.due <= step {
			h.release()
			return true
		}
		return false
	})
}

func (d *chaosDriver) pick(statuses ...int) int { return statuses[d.rng.IntN(len(statuses))] }

func (d *chaosDriver) restart() {
	d.restartReq <- struct{}{}
	<-d.restartDone
	d.stopped = false
}

func (d *chaosDriver) fault(kind int) {
	srv := d.srv
	switch kind {
	case faultListStatus:
		srv.Inject(apiserver.Fault{Verb: "list", Status: d.pick(http.StatusForbidden, http.StatusGone,
			http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable), Count: 1 + d.rng.IntN(3)})
	case faultListTooLarge:
		srv.Inject(apiserver.Fault{Verb: "list", Status: http.StatusGatewayTimeout, Cause: metav1.CauseTypeResourceVersionTooLarge})
	case faultWatchStatus:
		srv.Inject(apiserver.Fault{Verb: "watch", Status: d.pick(http.StatusForbidden, http.StatusGone, http.StatusTooManyRequests,
			http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusGatewayTimeout), Count: 1 + d.rng.IntN(3)})
	case faultAnyVerb:
		srv.Inject(apiserver.Fault{Status: http.StatusInternalServerError, Count: 1 + d.rng.IntN(2)})
	case faultStallList:
		d.stall("list")
	case faultStallWatch:
		d.stall("watch")
	case faultRelease:
		if len(d.held) > 0 {
			i := d.rng.IntN(len(d.held))
			d.held[i].release()
			d.held = slices.Delete(d.held, i, i+1)
		}
	case faultCloseWatches:
		srv.CloseWatches()
	case faultCompact:
		srv.Compact()
	case faultCompactAndClose:
		srv.Compact()
		srv.CloseWatches()
	case faultStopOrRestart:
		if d.stopped {
			d.restart()
		} else {
			srv.Stop()
			d.stopped = true
		}
	case faultBookmarks:
		srv.SendBookmarks()
	case faultWrongType:
		ns, name := d.randomPod()
		srv.InjectWatchEvent(apiserver.Pods, watch.Added, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, ResourceVersion: srv.ResourceVersion()}})
	case faultErrorEvent:
		var st metav1.Status
		if d.rng.IntN(2) == 0 {
			st = apierrors.NewResourceExpired("too old resource version (chaos)").Status()
		} else {
			st = apierrors.NewInternalError(fmt.Errorf("chaos")).Status()
		}
		srv.InjectWatchEvent(apiserver.Pods, watch.Error, &st)
	case faultNameless:
		ns, _ := d.randomPod()
		typ := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}[d.rng.IntN(3)]
		srv.InjectWatchEvent(apiserver.Pods, typ, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, ResourceVersion: srv.ResourceVersion()}})
	case faultBadRV:
		ns, name := d.randomPod()
		rv := []string{"", "not-a-number"}[d.rng.IntN(2)]
		typ := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}[d.rng.IntN(3)]
		srv.InjectWatchEvent(apiserver.Pods, typ, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{"gen": "bogus"}}})
	case faultRawData:
		srv.InjectRawWatchData(apiserver.Pods, []byte("{not json\n"))
	}
}

// chaosView is a handler that rebuilds the state it was told about (key ->
// resourceVersion) and records anything it should never have seen.
type chaosView struct {
	name string
	mu   sync.Mutex
	// Guarded by mu:
	view   map[string]string
	lastRV map[string]int // the highest RV seen per key, deletes included
	bad    []string
}

func newChaosView(name string) *chaosView {
	return &chaosView{name: name, view: map[string]string{}, lastRV: map[string]int{}}
}

// seen_locked checks obj and returns its key and RV. Resource versions come
// from one server-wide counter, so a key's RVs only grow, even across a
// delete and a re-create; a tombstone carries no RV of its own.
func (v *chaosView) seen_locked(call string, obj any) (key, rv string, ok bool) {
	switch o := obj.(type) {
	case *corev1.Pod:
		key, rv = o.Namespace+"/"+o.Name, o.ResourceVersion
		if o.Name == "" || o.Labels["gen"] == "bogus" {
			v.bad = append(v.bad, fmt.Sprintf("%s got a refused object %s@%q", call, key, rv))
			return key, rv, false
		}
		n, err := strconv.Atoi(rv)
		if err != nil {
			v.bad = append(v.bad, fmt.Sprintf("%s got %s with resourceVersion %q", call, key, rv))
			return key, rv, false
		}
		if n < v.lastRV[key] {
			v.bad = append(v.bad, fmt.Sprintf("%s: %s went back from resourceVersion %d to %d", call, key, v.lastRV[key], n))
		}
		v.lastRV[key] = max(v.lastRV[key], n)
		return key, rv, true
	case deltafifo.DeletedFinalStateUnknown:
		return o.Key, "", true
	}
	v.bad = append(v.bad, fmt.Sprintf("%s got a %T", call, obj))
	return "", "", false
}

func (v *chaosView) OnAdd(obj any, _ bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if key, rv, ok := v.seen_locked("OnAdd", obj); ok {
		v.view[key] = rv
	}
}

func (v *chaosView) OnUpdate(_, obj any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if key, rv, ok := v.seen_locked("OnUpdate", obj); ok {
		v.view[key] = rv
	}
}

func (v *chaosView) OnDelete(obj any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if key, _, ok := v.seen_locked("OnDelete", obj); ok {
		delete(v.view, key)
	}
}

func (v *chaosView) state() map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.view)
}

func (v *chaosView) violations() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.bad)
}

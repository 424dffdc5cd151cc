package reflector

// A handler may change the object it is given (client-go's own TestUpdate
// deletes it through a fake source that sets its resourceVersion). Once a
// watch event's object is in the store, it belongs to whoever reads the
// store, so the reflector must have read the event's resourceVersion
// before storing it. These tests run the same stores on client-go's
// reflector and ours and require the same answer.

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	kcache "k8s.io/client-go/tools/cache"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

// handlerRV is what the mutating stores write into an object they were given.
const handlerRV = "999999999"

// mutatingStore changes the resourceVersion of every object it is handed
// by Add or Update, as a handler that edits its object would: at once
// (sync), or from a goroutine of its own (async, which only the race
// detector can see racing a later read by the reflector).
type mutatingStore struct {
	store.Store
	async bool
	wg    sync.WaitGroup
}

func (s *mutatingStore) mutate(obj any) {
	p := obj.(*corev1.Pod)
	if !s.async {
		p.ResourceVersion = handlerRV
		return
	}
	s.wg.Go(func() { p.ResourceVersion = handlerRV })
}

func (s *mutatingStore) Add(obj any) error {
	err := s.Store.Add(obj)
	s.mutate(obj)
	return err
}

func (s *mutatingStore) Update(obj any) error {
	err := s.Store.Update(obj)
	s.mutate(obj)
	return err
}

// runMutatingStores runs client-go's reflector and ours, each into its own
// mutatingStore, through the same creates and updates made while both
// watch, and returns the resourceVersion each recorded last and the server's.
func runMutatingStores(t *testing.T, async bool) (ours, theirs, server string) {
	e := newEnv(t)
	client, err := kube.RESTClientFor(e.srv.Config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)

	oursStore := &mutatingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc), async: async}
	oursR := newTestReflector(e.lw, oursStore, &errorLog{}, ReflectorOptions{})
	theirsStore := &mutatingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc), async: async}
	theirsR := kcache.NewReflectorWithOptions(kcache.NewListWatchFromClient(client, "pods", metav1.NamespaceAll, fields.Everything()),
		&corev1.Pod{}, theirsStore, kcache.ReflectorOptions{Backoff: &wait.Backoff{
			Duration: fastBackoff.Duration, Factor: fastBackoff.Factor, Cap: fastBackoff.Cap, Steps: fastBackoff.Steps}})
	run(t, oursR)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); theirsR.Run(stop) }()
	t.Cleanup(func() { close(stop); <-done; oursStore.wg.Wait(); theirsStore.wg.Wait() })

	// Both synced (an empty initial state) before the writes, so every
	// write reaches them as a watch event: Add or Update on the store.
	testutil.Eventually(t, "both reflectors synced", func() bool {
		return oursR.LastSyncResourceVersion() != "" && theirsR.LastSyncResourceVersion() != ""
	})
	for i := range 5 {
		created, err := e.srv.Create(pod("a", fmt.Sprint("p", i)))
		require.NoError(t, err)
		p := created.(*corev1.Pod).DeepCopy()
		p.Labels = map[string]string{"updated": "yes"}
		_, err = e.srv.Update(p)
		require.NoError(t, err)
	}
	server = e.srv.ResourceVersion()
	testutil.Eventually(t, "both reflectors reached the server's resourceVersion or another", func() bool {
		return oursR.LastSyncResourceVersion() != "" && theirsR.LastSyncResourceVersion() == server &&
			len(oursStore.List()) == 5
	})
	// Ours has had every event (five objects, and client-go's reached the
	// last): give it until the same point, whichever RV it records.
	testutil.Eventually(t, "ours applied the last update", func() bool {
		rv := oursR.LastSyncResourceVersion()
		return rv == server || rv == handlerRV
	})
	return oursR.LastSyncResourceVersion(), theirsR.LastSyncResourceVersion(), server
}

// A handler that edits its object at once must not change the
// resourceVersion the reflector records: the next WATCH starts from it, and
// a made-up one would be refused (410) or, worse, skip events.
func TestRecordedResourceVersionIsTheEventsNotTheHandlers(t *testing.T) {
	ours, theirs, server := runMutatingStores(t, false)
	require.Equal(t, server, theirs, "client-go records the event's resourceVersion")
	require.Equal(t, theirs, ours, "ours must record the event's resourceVersion, read before the store had the object, as client-go does")
}

// The same edit from another goroutine: under -race, a read of the
// resourceVersion after the store had the object is a data race that
// fails the test (client-go reads it before store.Add: no race).
func TestNoDataRaceWithAHandlerThatEditsItsObject(t *testing.T) {
	ours, theirs, server := runMutatingStores(t, true)
	require.Equal(t, server, theirs)
	require.Equal(t, theirs, ours)
}

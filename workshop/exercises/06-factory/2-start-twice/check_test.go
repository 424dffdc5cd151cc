//go:build workshop

package starttwice

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 3)
	client, err := factory.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	f := factory.NewSharedInformerFactory(client, 0)
	stop := make(chan struct{})
	defer f.Shutdown()
	defer close(stop)
	f.Core().V1().Pods().Informer()
	f.Start(stop)
	f.WaitForCacheSync(stop)
	kit.WaitFor(t, "the pod watch", func() bool { return srv.WatchCount() == 1 })
	cms := f.Core().V1().ConfigMaps().Informer()
	f.Start(stop)
	f.WaitForCacheSync(stop)
	kit.WaitFor(t, "the configmap watch", func() bool { return srv.WatchCount() == 2 })

	// A pod and a ConfigMap, seen by both informers (so that neither
	// watch is a "very short" one), then every watch closed.
	pods := f.Core().V1().Pods().Informer()
	kit.CreatePods(t, srv, "q", 1)
	if _, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "c"}}); err != nil {
		t.Fatal(err)
	}
	kit.WaitFor(t, "both informers to hold the new objects", func() bool {
		return len(pods.GetStore().ListKeys()) == 4 && len(cms.GetStore().ListKeys()) == 1
	})
	watches := func() int { return len(kit.Requests(srv, "pods", nil)) + len(kit.Requests(srv, "configmaps", nil)) }
	before := watches()
	srv.CloseWatches()
	kit.WaitFor(t, "both informers to watch again", func() bool { return watches() >= before+2 && srv.WatchCount() == 2 })

	rename := func(rv string) string {
		if rv == "" {
			return rv
		}
		return "later"
	}
	if got := kit.Requests(srv, "pods", rename); !slices.Equal(Pods, got) {
		t.Errorf("Pods: not the pod requests the server saw: %s. What does the second Start do with an informer that is running already, and what does a running informer send when its watch closes?", mistake("pod", Pods, got))
	}
	if got := kit.Requests(srv, "configmaps", rename); !slices.Equal(ConfigMaps, got) {
		t.Errorf("ConfigMaps: not the ConfigMap requests the server saw: %s. How does a new informer fetch its state, does it need another request to go on watching, and what does it send when its watch closes?", mistake("ConfigMap", ConfigMaps, got))
	}
}

// requestForm is the forms the task gives a request.
var requestForm = regexp.MustCompile(`^(watch rv=\S* stream|watch rv=\S*|list rv=\S*( limit=\d+)?)$`)

// mistake says what kind of mistake yours holds, never which entry: a
// message that names the first wrong entry lets a script that tries the
// page's forms find the answer one entry at a time.
func mistake(what string, yours, real []string) string {
	var says []string
	switch {
	case len(yours) < len(real):
		says = append(says, "the server saw more "+what+" requests than you wrote")
	case len(yours) > len(real):
		says = append(says, "the server saw fewer "+what+" requests than you wrote")
	}
	for _, r := range yours {
		if !requestForm.MatchString(r) {
			says = append(says, `some of your entries are not in the forms the task gives ("watch rv=X stream", "watch rv=X", "list rv=X limit=N", with "" or later for X)`)
			break
		}
	}
	if len(says) == 0 {
		says = append(says, "each of your requests is in the task's forms, and there are as many as the server saw")
	}
	return strings.Join(says, "; ")
}

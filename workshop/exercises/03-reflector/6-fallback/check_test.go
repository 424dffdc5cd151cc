//go:build workshop

package fallback

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

// requests runs a reflector with client-go v0.37.2's defaults over lw and
// returns the pod requests srv saw, resourceVersions renamed as the
// exercise says. With relist, it then forces a relist as 1-requests does.
func requests(t *testing.T, srv *apiserver.Server, lw func(*apiserver.Server) reflector.ListerWatcher, relist bool) []string {
	t.Helper()
	kit.CreatePods(t, srv, "p", 2)
	first := srv.ResourceVersion()
	synctest.Test(t, func(t *testing.T) {
		r := reflector.NewReflector(lw(srv), &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), 0)
		r.SetWatchErrorHandler(func(*reflector.Reflector, error) {})
		stop := kit.Run(r.RunWithContext)
		defer stop()
		kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
		time.Sleep(5 * time.Second)
		if relist {
			if _, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}}); err != nil {
				t.Fatal(err)
			}
			srv.Compact()
			srv.CloseWatches()
			time.Sleep(30 * time.Second)
		}
	})
	return kit.Requests(srv, "pods", kit.RenameRVs(map[string]string{first: "S"}))
}

// optOut is a client that cannot stream, as client-go's fake clientset
// says of itself.
type optOut struct{}

func (optOut) IsWatchListSemanticsUnSupported() bool { return true }

// compare says what is wrong with a prediction, and which hint helps,
// without giving the server's requests away.
func compare(name string, predicted, got []string, hint func(i int) int) string {
	if len(predicted) == 0 {
		return fmt.Sprintf("%s: you predicted no request yet; the reflector sends some (hint %d)", name, hint(0))
	}
	for i := range max(len(predicted), len(got)) {
		switch {
		case i >= len(predicted):
			return fmt.Sprintf("%s: the server saw more than your %d requests; what does the reflector send after %q? (hint %d)",
				name, len(predicted), predicted[len(predicted)-1], hint(i))
		case i >= len(got):
			return fmt.Sprintf("%s: the server saw fewer requests; your %q (request %d) and what follows were never sent (hint %d)",
				name, predicted[i], i+1, hint(i))
		case predicted[i] != got[i]:
			return fmt.Sprintf("%s: request %d, %q, is not what the server saw there (hint %d)", name, i+1, predicted[i], hint(i))
		}
	}
	return ""
}

func TestPrediction(t *testing.T) {
	refused := requests(t, kit.StartServer(t, apiserver.Options{DisableWatchList: true}),
		func(srv *apiserver.Server) reflector.ListerWatcher {
			return kit.InProcessListWatch(srv, apiserver.Pods)
		}, true)
	optedOut := requests(t, kit.StartServer(t), func(srv *apiserver.Server) reflector.ListerWatcher {
		lw := kit.InProcessListWatch(srv, apiserver.Pods).(reflector.ListerWatcherWithContext)
		return reflector.ToListWatcherWithWatchListSemantics(&reflector.ListWatch{ListWithContextFunc: lw.ListWithContext, WatchFuncWithContext: lw.WatchWithContext}, optOut{})
	}, false)
	var problems []string
	if p := compare("Refused", Refused, refused, func(i int) int {
		if i < 3 {
			return 1
		}
		return 2
	}); p != "" {
		problems = append(problems, p)
	}
	if p := compare("OptOut", OptOut, optedOut, func(int) int { return 3 }); p != "" {
		problems = append(problems, p)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Log("go run ./cmd/workshop hint 03-reflector/6-fallback shows the hints one by one")
	}
}

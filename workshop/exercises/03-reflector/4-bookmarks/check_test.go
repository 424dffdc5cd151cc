//go:build workshop

package bookmarks

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
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

func TestPrediction(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 2)
	first := srv.ResourceVersion()
	var bookmark string
	var got []string
	synctest.Test(t, func(t *testing.T) {
		r := reflector.NewReflector(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, store.NewStore(store.MetaNamespaceKeyFunc), 0)
		r.SetWatchErrorHandler(func(*reflector.Reflector, error) {})
		stop := kit.Run(r.RunWithContext)
		defer stop()
		kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
		time.Sleep(5 * time.Second)
		for i := range 3 {
			if _, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("c", i)}}); err != nil {
				t.Fatal(err)
			}
		}
		bookmark = srv.ResourceVersion()
		srv.SendBookmarks()
		synctest.Wait()
		srv.Compact()
		srv.CloseWatches()
		time.Sleep(30 * time.Second)
		got = kit.Requests(srv, "pods", kit.RenameRVs(map[string]string{first: "S", bookmark: "B"}))
	})
	if !slices.Equal(WithBookmark, got) {
		t.Errorf("WithBookmark: not the pod requests the server saw: %s. Which resourceVersion does the reflector hold when the watch closes, and is it older than the compaction?", whatIsWrong(WithBookmark, got))
	}
}

// requestForm is the forms the task gives a request.
var requestForm = regexp.MustCompile(`^(watch rv=\S* stream|watch rv=\S*|list rv=\S*( limit=\d+)?)$`)

// whatIsWrong says what kind of mistake yours holds, and never where in
// the list it is: "your entry N is the first that is not what happened"
// let a script that tries the page's forms pass a position at a time.
func whatIsWrong(yours, real []string) string {
	var says []string
	switch {
	case len(yours) < len(real):
		says = append(says, "the server saw more pod requests than you wrote")
	case len(yours) > len(real):
		says = append(says, "the server saw fewer pod requests than you wrote")
	}
	forms, numbers := true, false
	for _, r := range yours {
		forms = forms && requestForm.MatchString(r)
		numbers = numbers || regexp.MustCompile(`rv=\d`).MatchString(r)
	}
	if !forms {
		says = append(says, `some of your entries are not in the forms the task gives ("watch rv=X stream", "watch rv=X", "list rv=X limit=N")`)
	}
	if numbers {
		says = append(says, "write each resourceVersion as the task says (S, B, or its word for any other), not as a number")
	}
	if len(says) == 0 {
		says = append(says, "each of your requests is in the task's forms, and there are as many as the server saw")
	}
	return strings.Join(says, "; ")
}

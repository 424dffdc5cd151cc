//go:build workshop

package requests

import (
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
	var got []string
	synctest.Test(t, func(t *testing.T) {
		s := store.NewStore(store.MetaNamespaceKeyFunc)
		r := reflector.NewReflector(kit.InProcessListWatch(srv, apiserver.Pods), &corev1.Pod{}, s, 0)
		stop := kit.Run(r.RunWithContext)
		defer stop()
		kit.WaitFor(t, "the watch", func() bool { return srv.WatchCount() == 1 })
		time.Sleep(5 * time.Second)
		if _, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}}); err != nil {
			t.Fatal(err)
		}
		srv.Compact()
		srv.CloseWatches()
		time.Sleep(30 * time.Second)
		got = kit.Requests(srv, "pods", kit.RenameRVs(map[string]string{first: "S"}))
	})
	if !slices.Equal(Requests, got) {
		t.Errorf("Requests: you predicted %q, not the pod requests the server saw: %s", Requests, whatIsWrong(Requests, got))
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
	forms, numbers, lists := true, false, false
	for _, r := range yours {
		forms = forms && requestForm.MatchString(r)
		numbers = numbers || regexp.MustCompile(`rv=\d`).MatchString(r)
		lists = lists || strings.HasPrefix(r, "list ")
	}
	if !forms {
		says = append(says, `some of your entries are not in the forms the task gives ("watch rv=X stream", "watch rv=X", "list rv=X limit=N")`)
	}
	if numbers {
		says = append(says, "write each resourceVersion as the task says (S for the initial state's, its word for a newer one), not as a number")
	}
	if lists {
		says = append(says, "you have a LIST: with v0.37.2's defaults (WatchListClient on), when does the table say a reflector sends one?")
	}
	says = append(says, `read each of your requests against the table in docs/03-reflector.md: why the first asks for "", what a watch that closed normally resumes from, and what answers a 410`)
	return strings.Join(says, "; ")
}

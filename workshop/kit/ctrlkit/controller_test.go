package ctrlkit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit/ctrlkit"
)

// 07-controller/1 is done from its task: the scenario it describes, the
// three controllers as the kit ships them and no setting of the checker's
// own, has one slow handler, which the spans show, and the listener's name
// carries whoever calls FuncsFor (it used to exist only in the checker, as
// a Delay). Which one is the exercise's answer: the test does not name it
// either (the selfcheck runs the solution, which does).
func TestTheSlowControllerIsInTheScenarioAsDescribed(t *testing.T) {
	srv := kit.StartServer(t)
	spans := kit.NewSpans()
	audit, quota, label := &kit.AuditController{}, &kit.QuotaController{}, &kit.LabelController{}
	ctrlkit.StartDropinInformer(t, srv, spans, kit.FuncsFor(audit.OnChange), kit.FuncsFor(quota.OnChange), kit.FuncsFor(label.OnChange))
	kit.CreatePods(t, srv, "p", 20)
	kit.WaitFor(t, "every pod at every controller", func() bool { return audit.Len() == 20 && quota.Len() == 20 && label.Len() == 20 })
	took := map[string]time.Duration{}
	for _, s := range spans.Named("OnAdd", "") {
		took[kit.Attr(s, "informer.listener")] += kit.Duration(s)
	}
	slowest := ""
	for l, d := range took {
		if slowest == "" || d > took[slowest] {
			slowest = l
		}
	}
	if len(took) != 3 || !strings.Contains(slowest, "Controller).OnChange-fm") || !strings.Contains(slowest, "kit.FuncsFor.func1") || strings.Contains(slowest, "kit_test") {
		t.Errorf("the slowest listener is %q (took %v): want one of the three controllers', named after kit.FuncsFor's closure whoever calls it", slowest, took)
	}
}

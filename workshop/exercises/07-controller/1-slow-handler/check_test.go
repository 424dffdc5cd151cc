//go:build workshop

package slowhandler

import (
	"testing"
	"time"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit/ctrlkit"
)

func TestFindings(t *testing.T) {
	srv := kit.StartServer(t)
	spans := kit.NewSpans()
	audit, quota, label := &kit.AuditController{}, &kit.QuotaController{}, &kit.LabelController{}
	ctrlkit.StartDropinInformer(t, srv, spans, kit.FuncsFor(audit.OnChange), kit.FuncsFor(quota.OnChange), kit.FuncsFor(label.OnChange))
	kit.CreatePods(t, srv, "p", 20)
	kit.WaitFor(t, "every pod at every controller", func() bool { return audit.Len() == 20 && quota.Len() == 20 && label.Len() == 20 })

	// The listener whose handler calls took longest in total.
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
	var lastSlowStart, lastOtherEnd time.Time
	for _, s := range spans.Named("OnAdd", "") {
		if kit.Attr(s, "informer.listener") == slowest {
			if s.StartTime().After(lastSlowStart) {
				lastSlowStart = s.StartTime()
			}
		} else if s.EndTime().After(lastOtherEnd) {
			lastOtherEnd = s.EndTime()
		}
	}
	// One message for both findings: which one is wrong would tell a
	// yes/no answer.
	if Slow != slowest || OthersFirst != lastOtherEnd.Before(lastSlowStart) {
		t.Errorf("your findings do not match the OnAdd spans: Slow must be the informer.listener value of the listener whose OnAdd spans took longest in total, exactly as the spans carry it (you wrote %q), and OthersFirst what their start and end times show; see hint 1", Slow)
	}
}

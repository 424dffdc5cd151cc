//go:build workshop

package slowhandler

import (
	"strings"
	"testing"
	"time"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestFindings(t *testing.T) {
	srv := kit.StartServer(t)
	spans := kit.NewSpans()
	audit, quota, label := &kit.AuditController{}, &kit.QuotaController{}, &kit.LabelController{}
	quota.Delay = 15 * time.Millisecond
	kit.StartDropinInformer(t, srv, spans, kit.FuncsFor(audit.OnChange), kit.FuncsFor(quota.OnChange), kit.FuncsFor(label.OnChange))
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
	if Slow == "" || !strings.Contains(slowest, "."+Slow+")") && !strings.Contains(slowest, "(*"+Slow+")") {
		t.Errorf("Slow: you wrote %q, which is not the controller whose handler spans (OnAdd) took longest; see hint 1", Slow)
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
	if OthersFirst != lastOtherEnd.Before(lastSlowStart) {
		t.Errorf("OthersFirst: you wrote %v, not what the OnAdd spans' start and end times show; see hint 2", OthersFirst)
	}
}

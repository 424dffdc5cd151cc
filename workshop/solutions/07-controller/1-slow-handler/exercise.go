// Package slowhandler is workshop exercise 07-controller/1-slow-handler.
//
// # Which of your handlers is slow?
//
// Kind: investigate. Minutes: 15. Needs: none. Practises: docs/07-your-controller.md, "The trace goes on to your reconcile".
//
// Three controllers share one informer: package dropin's, behind
// client-go's interface, as a controller author's own would after the
// one-line change. Each controller's handler is client-go's
// ResourceEventHandlerFuncs calling one method of its own type:
// kit.AuditController, kit.QuotaController and kit.LabelController
// (OnChange), added in that order with ctrlkit.StartDropinInformer and
// kit.FuncsFor. Then 20 pods are created (kit.CreatePods). One of the
// three handlers is slow. Write that scenario as a test of your own
// (kit.NewSpans for the spans; kit.WaitFor until each controller's Len()
// is 20), and find out from the spans alone, as you would in a trace
// viewer:
//
//   - Slow: the informer.listener attribute of the slow listener's
//     handler spans (OnAdd), exactly as the spans carry it;
//   - OthersFirst: whether the other two listeners' last handler call
//     (OnAdd span) ended before the slow listener's last one began.
//
// Would the other two controllers' reconciles have waited for it?
package slowhandler

// Your findings.
var (
	Slow        = "github.com/informer-anatomy/informer-anatomy/workshop/kit.(*QuotaController).OnChange-fm+github.com/informer-anatomy/informer-anatomy/workshop/kit.FuncsFor.func1+github.com/informer-anatomy/informer-anatomy/workshop/kit.(*QuotaController).OnChange-fm#1" // dropin names a Funcs handler after the functions it holds, then "#" and its index
	OthersFirst = true
)

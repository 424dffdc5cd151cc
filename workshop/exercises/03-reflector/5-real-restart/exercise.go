// Package realrestart is workshop exercise 03-reflector/5-real-restart.
//
// # Against a real cluster: a kube-apiserver restart
//
// Kind: investigate. Minutes: 15. Needs: cluster. Practises: docs/03-reflector.md, "Every failure mode".
//
// The e2e test TestRestartingKubeAPIServerMidWatchLosesNothing restarts a
// real kube-apiserver (etcd keeps running) while a reflector watches
// ConfigMaps, and requires the cache to converge. e2e tests only build
// with the e2e build tag, and only find the cluster through the
// environment that hack/local-cluster.sh env prints. Start the cluster
// (hack/local-cluster.sh up; the first time it builds kube-apiserver, for
// several minutes), run the test with -v, and read its log around the
// restart: it logs every request its reflector sends ("reflector: WATCH
// rv=..."), every error the reflector's WatchErrorHandler gets, and when
// kube-apiserver restarts. (kube-apiserver's own log,
// hack/.cluster/kube-apiserver.log, has no request lines at its default
// verbosity.)
//
//   - Command: the shell line you ran the test with (after "up").
//   - Evidence: the line a passing run logs last, after "evidence: ": the
//     test's namespace and a digest of it, which tells the checker that
//     your answers come from a run against the cluster.
//   - Relisted: after the restart, did the reflector fetch the whole
//     state again (a new stream, or a LIST where the server cannot
//     stream), or only WATCH again from its resourceVersion? (etcd was
//     not compacted.)
//   - WhileDownArrivesAs: a pod created while the server is down reaches
//     a reflector's store through which store method: "Add" (a watch
//     event) or "Replace" (a relist)?
//
// The checker cannot reach your cluster: it checks Command's parts and
// Evidence, and proves the other two on the embedded API server (stop,
// create, restart).
package realrestart

// Your findings.
var (
	Command            = ""
	Evidence           = ""
	Relisted           = true
	WhileDownArrivesAs = ""
)

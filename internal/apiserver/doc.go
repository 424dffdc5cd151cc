// Package apiserver is an embedded, in-process Kubernetes API server for the
// resources the chapters use: core/v1 Pods, ConfigMaps and Endpoints, and
// apps/v1 ReplicaSets and Deployments.
//
// It is a server, not a mock of any client: it speaks the list/watch wire
// protocol (JSON over HTTP, k8s.io/apimachinery types) closely enough that
// `rest.Config{Host: server.URL}` works unchanged, and it keeps the rules a
// reflector depends on:
//
//   - one resourceVersion counter for every write, increasing, like etcd's revision;
//   - LIST with labelSelector, fieldSelector (metadata.name, metadata.namespace),
//     limit/continue over a consistent snapshot, and resourceVersion rules
//     ("" and "0" serve the current state, a future RV is "Too large resource
//     version", an expired continue token is 410);
//   - WATCH from a resourceVersion, replayed from a bounded history; a watch
//     from before the history (compacted) gets an ERROR event with 410
//     "too old resource version", as the real watch cache sends; synthetic
//     ADDED events for RV "" and "0"; bookmarks when asked; sendInitialEvents
//     with the "k8s.io/initial-events-end" bookmark; timeoutSeconds; an object
//     that stops or starts matching a watch's selector is sent as DELETED or
//     ADDED, as the real server does;
//   - LIST and WATCH options checked by apimachinery's ValidateListOptions,
//     the check kube-apiserver runs, refused as it refuses them (422 Invalid).
//
// A watch-list (WATCH with sendInitialEvents=true,
// resourceVersionMatch=NotOlderThan and bookmarks: how client-go's reflector
// starts by default) is served unless [Options.DisableWatchList] is set at
// [Start] or [Server.SetWatchListEnabled](false) is called while running:
// then the server answers it as a kube-apiserver whose WatchList feature gate
// is off, 422 Invalid (reason Invalid) with the message
//
//	ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled
//
// and the client falls back to LIST. The request log shows each refusal ([Request.Refused]) and
// tells a watch-list from a plain watch ([Request.IsWatchList]).
//
// For tests it adds what a real server cannot be made to do on demand:
// [Server.Inject] answers the next requests with an error status,
// [Server.StallNext] holds a request, [Server.ClearFaults] drops what is
// left of both, [Server.CloseWatches] ends every watch,
// [Server.Compact] forgets history, [Server.Stop] and [Server.Restart] refuse
// and accept connections, [Server.SendBookmarks] and
// [Server.InjectWatchEvent] put chosen events on open watches, and
// [Server.Requests] records what clients asked for.
//
// Besides HTTP, [Server.List] and [Server.Watch] serve the same logic in
// process: tests that run inside testing/synctest use them, because a
// goroutine blocked on a socket is never "durably blocked" and would keep a
// synctest bubble's clock from advancing.
// [Server.ListerWatcher] wraps the two as one resource's [ListerWatcher],
// which client-go's reflectors and informers take as they are, and so do
// the chapters'.
package apiserver

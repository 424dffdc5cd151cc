// Package reflector is chapter 3 of informer-anatomy: where the informer
// meets the API server.
//
// A [Reflector] keeps a store in step with one resource on the server. By
// default, as client-go v0.37.2's does (its WatchListClient gate is on):
//
//  1. WATCH with sendInitialEvents=true: the server streams every object as
//     an ADDED event, then a bookmark annotated k8s.io/initial-events-end;
//  2. Replace the store's contents with what was streamed, at the
//     bookmark's resourceVersion (RV);
//  3. keep the same watch open and apply each ADDED, MODIFIED and DELETED
//     event to the store, moving the RV along;
//  4. when the watch closes normally, watch again from the current RV; when
//     it fails in a way that may have lost events (410 Expired, an ERROR
//     event, a very short watch), go back to 1, after a backoff.
//
// A server that cannot stream (422), the gate switched off (client-go's
// WatchListClient gate: KUBE_FEATURE_WatchListClient=false, or set in code
// on client-go's features registry; or [ReflectorOptions].UseWatchList),
// or a ListerWatcher that opts out ([DoesClientNotSupportWatchListSemantics])
// gets the classic conversation instead: LIST everything (at RV "0" the
// first time, in pages of 500), Replace, then WATCH from the list's RV.
//
// It mirrors [k8s.io/client-go/tools/cache] v0.37.2 listwatch.go
// ([ListerWatcher], [ListWatch], [NewListWatchFromClient]) and reflector.go
// ([Reflector], [NewReflector], [ListAndWatch]), the paging of tools/pager,
// the WatchListClient gate of features ([FeatureGates]) and util/watchlist. It writes into any [ReflectorStore]; with a chapter-1
// [store.Store] you get a cache that follows the server, without events
// (that is chapter 4's job).
//
// Everything that can go wrong between a client and an API server has a rule
// here, and a test against the embedded API server of internal/apiserver that
// provokes it: expired and too-large resourceVersions, 429s and refused
// connections (back off, re-watch, do not relist), ERROR events, malformed
// streams, objects of the wrong type, watches that end at once. Each failure
// reaches the [WatchErrorHandler] with a message that says what happened; the
// reflector keeps running. Bad input never reaches the store: an object of
// the wrong type or without a name (on the watch or in a LIST) is refused
// and reported, and an event whose resourceVersion is empty or not a number
// is refused, reported, and answered with a relist, so that no delete is
// lost. A stop is never reported.
//
// With a TracerProvider it emits the span contract's cycle spans:
// Reflector.ListAndWatch per cycle, Reflector.watchlist per streaming
// request, Reflector.list per LIST and Reflector.watch per watch request;
// a fallback from the stream to a LIST is an event on the cycle span.
//
// See [ExampleNewReflector], and docs/03-reflector.md for the chapter.
package reflector

import store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"

// The chapter-1 store is the simplest ReflectorStore.
var _ ReflectorStore = store.NewStore(store.MetaNamespaceKeyFunc)

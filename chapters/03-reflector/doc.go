// Package reflector is chapter 3 of informer-anatomy: where the informer
// meets the API server.
//
// A [Reflector] keeps a store in step with one resource on the server:
//
//  1. LIST everything, at resourceVersion "0" the first time (any recent
//     state, served from the API server's watch cache), in pages of 500;
//  2. Replace the store's contents with the list, then remember the list's
//     resourceVersion (RV);
//  3. WATCH from that RV, with bookmarks, and apply each ADDED, MODIFIED and
//     DELETED event to the store, moving the RV along;
//  4. when the watch closes normally, watch again from the current RV; when
//     it fails in a way that may have lost events (410 Expired, an ERROR
//     event, a very short watch), go back to 1, after a backoff.
//
// It mirrors [k8s.io/client-go/tools/cache] v0.37.2 listwatch.go
// ([ListerWatcher], [ListWatch], [NewListWatchFromClient]) and reflector.go
// ([Reflector], [NewReflector], [ListAndWatch]), and the paging of
// tools/pager. It writes into any [ReflectorStore]; with a chapter-1
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
// Reflector.ListAndWatch per cycle, Reflector.list per LIST and
// Reflector.watch per watch request.
//
// See [ExampleNewReflector], and docs/03-reflector.md for the chapter.
package reflector

import store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"

// The chapter-1 store is the simplest ReflectorStore.
var _ ReflectorStore = store.NewStore(store.MetaNamespaceKeyFunc)

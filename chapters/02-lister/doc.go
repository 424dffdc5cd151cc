// Package lister is chapter 2 of informer-anatomy: how controllers read the
// informer's cache.
//
// A lister is a read-only, typed view of a chapter-1 [store.Indexer]. It never
// talks to the API server: List and Get are map reads on the local cache the
// informer keeps up to date. That is the point of an informer. A controller
// that reconciles thousands of objects a minute would otherwise send thousands
// of GETs; with a lister it sends none, at the price of reading data that may
// be a moment stale.
//
// It mirrors [k8s.io/client-go/tools/cache] listers.go ([ListAll],
// [ListAllByNamespace], [GenericLister], [NewGenericLister]) and the generated
// listers under [k8s.io/client-go/listers], which since client-go 0.31 are all
// thin skins on one generic type, [k8s.io/client-go/listers.ResourceIndexer].
// Ours is [ResourceIndexer]; [PodLister], [EndpointsLister],
// [ReplicaSetLister], [ConfigMapLister] and [DeploymentLister] are each a few
// lines on top of it.
//
// # Two rules for callers
//
// Never mutate what a lister returns: it is the cache's own object, shared with
// every other reader and with the informer's indexes. DeepCopy before you
// change it. And expect staleness: an object you just created through the API
// may not be in the lister yet.
//
// See [ExampleListAllByNamespace] and [ExampleNewPodLister], and
// docs/02-lister.md for the chapter.
package lister

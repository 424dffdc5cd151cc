// Package factory is chapter 6 of informer-anatomy: the SharedInformerFactory,
// the layer most controllers start from.
//
// A factory hands out one shared informer (chapter 5) per type, however many
// times and by however many controllers it is asked, so a process opens one
// watch per resource and keeps one cache. Informers are created lazily, on
// the first Informer() or Lister() call, started together by
// [SharedInformerFactory].Start (which can be called again after creating
// more), and waited for with WaitForCacheSync.
//
// It mirrors [k8s.io/client-go/informers] (factory.go and the generated
// per-type informers) for the types the chapters use: Core().V1().Pods(),
// ConfigMaps(), Endpoints(), Apps().V1().ReplicaSets(), Deployments(), each
// with Informer() and a chapter-2 Lister(), all built from one generic helper
// instead of a generated file per type. ForResource gives an informer for
// any resource, as unstructured objects when the factory has no type for it.
//
// The [Client] it takes is a small set of REST clients (no generated
// clientset needed). See [ExampleNewSharedInformerFactory] and
// docs/06-factory.md.
package factory

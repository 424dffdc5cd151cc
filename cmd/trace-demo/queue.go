//lint:file-ignore SA1019 core/v1 Endpoints is deprecated, but client-go v0.37.2 still has its informer and lister, which this mirrors

package main

import (
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
)

// Choosing the queue. Chapter 6's factory, like client-go's, has no option
// for it: every informer it makes runs on the chapter-5 default, the
// RealFIFO. What the factory does offer, as upstream's does, is
// InformerFor: the first caller's constructor wins, and the typed accessor
// and ForResource then return that same informer. So the demo can pick the
// queue for the types the factory knows (typedExamples), and only for them:
// ForResource builds an unstructured informer under a key InformerFor
// cannot name.

// typedExamples are the resources chapter 6 has typed informers for, each
// with an example object (InformerFor's key is the object's Go type).
var typedExamples = map[schema.GroupVersionResource]func() runtime.Object{
	corev1.SchemeGroupVersion.WithResource("pods"):        func() runtime.Object { return &corev1.Pod{} },
	corev1.SchemeGroupVersion.WithResource("configmaps"):  func() runtime.Object { return &corev1.ConfigMap{} },
	corev1.SchemeGroupVersion.WithResource("endpoints"):   func() runtime.Object { return &corev1.Endpoints{} },
	appsv1.SchemeGroupVersion.WithResource("replicasets"): func() runtime.Object { return &appsv1.ReplicaSet{} },
	appsv1.SchemeGroupVersion.WithResource("deployments"): func() runtime.Object { return &appsv1.Deployment{} },
}

// filteredInformerFor registers with f, for gvr (one of typedExamples), an
// informer on queue q built as the factory's own would be (namespace,
// namespace index, resource as informer.name, tp) with a trace filter (nil:
// trace every object), which the factory's own informers cannot be given,
// and returns it.
func filteredInformerFor(f factory.SharedInformerFactory, gvr schema.GroupVersionResource, namespace string, q processor.QueueKind, tp trace.TracerProvider, filter deltafifo.TraceFilter) processor.SharedIndexInformer {
	example := typedExamples[gvr]
	return f.InformerFor(example(), func(c *factory.Client, resync time.Duration) processor.SharedIndexInformer {
		rc, err := c.RESTClient(gvr.GroupVersion())
		if err != nil {
			panic(err) // cannot happen: NewForConfig makes every typed client
		}
		lw := reflector.NewFilteredListWatchFromClient(rc, gvr.Resource, namespace, func(*metav1.ListOptions) {})
		return processor.NewSharedIndexInformerWithOptions(lw, example(), processor.SharedIndexInformerOptions{
			ResyncPeriod:   resync,
			Indexers:       store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
			Name:           gvr.Resource,
			TracerProvider: tp,
			Queue:          q,
			TraceFilter:    filter,
		})
	})
}

// typedResourceNames are typedExamples' resource names, sorted.
func typedResourceNames() []string {
	var out []string
	for gvr := range typedExamples {
		out = append(out, gvr.Resource)
	}
	slices.Sort(out)
	return out
}

// queueKind is the --queue value as a processor.QueueKind (parseFlags has
// checked it).
func queueKind(s string) processor.QueueKind {
	if s == processor.DeltaFIFOQueue.String() {
		return processor.DeltaFIFOQueue
	}
	return processor.RealFIFOQueue
}

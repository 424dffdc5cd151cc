//lint:file-ignore SA1019 core/v1 Endpoints is deprecated, but client-go v0.37.2 still has its informer and lister, which this mirrors

// Package informers builds the one informer a trace-demo run shows, through
// chapter 6's factory.
//
// Why not the factory's own informers: chapter 6's factory, like
// client-go's, has no option for the queue, the trace filter or a wrapper
// around the ListerWatcher; every informer it makes runs on chapter 5's
// default, the RealFIFO, and lists with a ListerWatcher built inside,
// where nothing can wrap it. What it does offer, as upstream's does, is
// InformerFor: the first caller's constructor wins, and the typed
// accessors and ForResource then hand back that same informer. [For] is
// that constructor.
package informers

import (
	"time"

	"go.opentelemetry.io/otel/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	factory "github.com/informer-anatomy/informer-anatomy/chapters/06-factory"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// typed are the resources chapter 6 has typed informers for, each with an
// example object: InformerFor's key is the object's Go type, so for these
// the typed accessor (Core().V1().Pods()) returns the informer [For]
// built. Any other resource is built under the unstructured type.
var typed = map[schema.GroupVersionResource]func() runtime.Object{
	corev1.SchemeGroupVersion.WithResource("pods"):        func() runtime.Object { return &corev1.Pod{} },
	corev1.SchemeGroupVersion.WithResource("configmaps"):  func() runtime.Object { return &corev1.ConfigMap{} },
	corev1.SchemeGroupVersion.WithResource("endpoints"):   func() runtime.Object { return &corev1.Endpoints{} },
	appsv1.SchemeGroupVersion.WithResource("replicasets"): func() runtime.Object { return &appsv1.ReplicaSet{} },
	appsv1.SchemeGroupVersion.WithResource("deployments"): func() runtime.Object { return &appsv1.Deployment{} },
}

// Spec is the informer [For] builds.
type Spec struct {
	Resource  schema.GroupVersionResource
	Namespace string // "": all namespaces
	Queue     processor.QueueKind
	// TracerProvider is the informer's (nil: the global one).
	TracerProvider trace.TracerProvider
	// TraceFilter picks the objects traced (nil: all).
	TraceFilter deltafifo.TraceFilter
	// ReflectorBackoff replaces the reflector's default pacing (nil: the
	// default, client-go's); the demo's tests shorten it.
	ReflectorBackoff *reflector.Backoff
	// Bytes, if set, keeps the estimate of the bytes the informer's cache
	// holds, which the live view shows: the informer tells it every
	// change it caches (chapter 5's Observer.Stored), counted from its
	// empty cache. A transform set on the informer later should be
	// wrapped with Bytes.Transform, for the bytes before it.
	Bytes *liveprobe.CacheBytes
}

// For registers with f, for spec.Resource, the informer the demo shows and
// returns it with the probe on its ListerWatcher. It is built as the
// factory's own would be (the factory's resync, a namespace index,
// informer.name the resource's name), on spec's queue and trace filter,
// and its requests (its stream, LIST and WATCH) pass through a
// [liveprobe.ReflectorProbe], which the lessons and the live view's
// reflector box read. A typed resource gets c's typed client; any other,
// c's unstructured one, under the [unstructured.Unstructured] type.
//
// Call it before anything asks f for the same type: the first constructor
// wins, and a later For would be handed the earlier informer, with a nil
// probe.
func For(f factory.SharedInformerFactory, c *factory.Client, spec Spec) (processor.SharedIndexInformer, *liveprobe.ReflectorProbe, error) {
	gvr := spec.Resource
	example, isTyped := typed[gvr]
	client := c.RESTClient
	if !isTyped {
		example = func() runtime.Object { return &unstructured.Unstructured{} }
		client = c.UnstructuredClient
	}
	// The client is made here, not in the constructor, which has no way
	// to return an error.
	rc, err := client(gvr.GroupVersion())
	if err != nil {
		return nil, nil, err
	}
	var probe *liveprobe.ReflectorProbe
	var observer processor.Observer
	if spec.Bytes != nil {
		observer.Stored = spec.Bytes.Stored
	}
	inf := f.InformerFor(example(), func(_ *factory.Client, resync time.Duration) processor.SharedIndexInformer {
		probe = liveprobe.NewReflectorProbe(reflector.NewFilteredListWatchFromClient(rc, gvr.Resource, spec.Namespace, func(*metav1.ListOptions) {}))
		return processor.NewSharedIndexInformerWithOptions(probe, example(), processor.SharedIndexInformerOptions{
			ResyncPeriod:   resync,
			Indexers:       store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc},
			Name:           gvr.Resource,
			TracerProvider: spec.TracerProvider,
			Queue:          spec.Queue,
			TraceFilter:    spec.TraceFilter,
			// The reflector's pacing: nil, client-go's, but in tests.
			ReflectorBackoff: spec.ReflectorBackoff,
			Observer:         observer,
		})
	})
	if spec.Bytes != nil && probe != nil {
		// Built here, not yet run: its cache is empty, the count starts
		// at 0 and misses nothing.
		spec.Bytes.Start(inf)
	}
	return inf, probe, nil
}

// QueueKind is a --queue value as a processor.QueueKind: deltafifo, or
// else the RealFIFO (the flag's parser has refused anything else).
func QueueKind(s string) processor.QueueKind {
	if s == processor.DeltaFIFOQueue.String() {
		return processor.DeltaFIFOQueue
	}
	return processor.RealFIFOQueue
}

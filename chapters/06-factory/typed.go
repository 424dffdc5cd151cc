//lint:file-ignore SA1019 core/v1 Endpoints is deprecated, but client-go v0.37.2 still has its informer and lister, which this mirrors

package factory

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
)

// typedInformer is the one generic helper behind every typed accessor: the
// type's example object and resource, and how to make its lister. Upstream
// generates one file per type with the same three methods.
type typedInformer[T runtime.Object, L any] struct {
	factory   *sharedInformerFactory
	gvr       schema.GroupVersionResource
	example   func() T
	newLister func(store.Indexer) L
}

// Informer returns the shared informer for the type, created on first use.
func (i typedInformer[T, L]) Informer() processor.SharedIndexInformer {
	return i.factory.InformerFor(i.example(), func(c *Client, resync time.Duration) processor.SharedIndexInformer {
		rc, err := c.RESTClient(i.gvr.GroupVersion())
		if err != nil {
			panic(err) // cannot happen: NewForConfig made every typed client
		}
		return i.factory.newInformer(rc, i.gvr, i.example(), resync)
	})
}

// Lister returns a typed lister over the informer's cache.
func (i typedInformer[T, L]) Lister() L { return i.newLister(i.Informer().GetIndexer()) }

// PodInformer gives access to the shared pod informer and its lister.
//
// Mirrors [k8s.io/client-go/informers/core/v1.PodInformer].
type PodInformer interface {
	Informer() processor.SharedIndexInformer
	Lister() lister.PodLister
}

// ConfigMapInformer: see PodInformer.
//
// Mirrors [k8s.io/client-go/informers/core/v1.ConfigMapInformer].
type ConfigMapInformer interface {
	Informer() processor.SharedIndexInformer
	Lister() lister.ConfigMapLister
}

// EndpointsInformer: see PodInformer.
//
// Mirrors [k8s.io/client-go/informers/core/v1.EndpointsInformer].
type EndpointsInformer interface {
	Informer() processor.SharedIndexInformer
	Lister() lister.EndpointsLister
}

// ReplicaSetInformer: see PodInformer.
//
// Mirrors [k8s.io/client-go/informers/apps/v1.ReplicaSetInformer].
type ReplicaSetInformer interface {
	Informer() processor.SharedIndexInformer
	Lister() lister.ReplicaSetLister
}

// DeploymentInformer: see PodInformer.
//
// Mirrors [k8s.io/client-go/informers/apps/v1.DeploymentInformer].
type DeploymentInformer interface {
	Informer() processor.SharedIndexInformer
	Lister() lister.DeploymentLister
}

// CoreGroup is the core API group. Mirrors [k8s.io/client-go/informers/core.Interface].
type CoreGroup interface{ V1() CoreV1 }

// CoreV1 is core/v1. Mirrors [k8s.io/client-go/informers/core/v1.Interface].
type CoreV1 interface {
	Pods() PodInformer
	ConfigMaps() ConfigMapInformer
	Endpoints() EndpointsInformer
}

// AppsGroup is the apps API group. Mirrors [k8s.io/client-go/informers/apps.Interface].
type AppsGroup interface{ V1() AppsV1 }

// AppsV1 is apps/v1. Mirrors [k8s.io/client-go/informers/apps/v1.Interface].
type AppsV1 interface {
	ReplicaSets() ReplicaSetInformer
	Deployments() DeploymentInformer
}

type core struct{ f *sharedInformerFactory }
type apps struct{ f *sharedInformerFactory }

func (f *sharedInformerFactory) Core() CoreGroup { return core{f} }
func (f *sharedInformerFactory) Apps() AppsGroup { return apps{f} }
func (c core) V1() CoreV1                        { return c }
func (a apps) V1() AppsV1                        { return a }

func (c core) Pods() PodInformer {
	return typedInformer[*corev1.Pod, lister.PodLister]{c.f, corev1.SchemeGroupVersion.WithResource("pods"),
		func() *corev1.Pod { return &corev1.Pod{} }, lister.NewPodLister}
}

func (c core) ConfigMaps() ConfigMapInformer {
	return typedInformer[*corev1.ConfigMap, lister.ConfigMapLister]{c.f, corev1.SchemeGroupVersion.WithResource("configmaps"),
		func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, lister.NewConfigMapLister}
}

func (c core) Endpoints() EndpointsInformer {
	return typedInformer[*corev1.Endpoints, lister.EndpointsLister]{c.f, corev1.SchemeGroupVersion.WithResource("endpoints"),
		func() *corev1.Endpoints { return &corev1.Endpoints{} }, lister.NewEndpointsLister}
}

func (a apps) ReplicaSets() ReplicaSetInformer {
	return typedInformer[*appsv1.ReplicaSet, lister.ReplicaSetLister]{a.f, appsv1.SchemeGroupVersion.WithResource("replicasets"),
		func() *appsv1.ReplicaSet { return &appsv1.ReplicaSet{} }, lister.NewReplicaSetLister}
}

func (a apps) Deployments() DeploymentInformer {
	return typedInformer[*appsv1.Deployment, lister.DeploymentLister]{a.f, appsv1.SchemeGroupVersion.WithResource("deployments"),
		func() *appsv1.Deployment { return &appsv1.Deployment{} }, lister.NewDeploymentLister}
}

// typedResources maps each typed GVR to its informer, for ForResource, as
// upstream's generated generic.go does.
var typedResources = map[schema.GroupVersionResource]func(*sharedInformerFactory) processor.SharedIndexInformer{
	corev1.SchemeGroupVersion.WithResource("pods"): func(f *sharedInformerFactory) processor.SharedIndexInformer { return f.Core().V1().Pods().Informer() },
	corev1.SchemeGroupVersion.WithResource("configmaps"): func(f *sharedInformerFactory) processor.SharedIndexInformer {
		return f.Core().V1().ConfigMaps().Informer()
	},
	corev1.SchemeGroupVersion.WithResource("endpoints"): func(f *sharedInformerFactory) processor.SharedIndexInformer {
		return f.Core().V1().Endpoints().Informer()
	},
	appsv1.SchemeGroupVersion.WithResource("replicasets"): func(f *sharedInformerFactory) processor.SharedIndexInformer {
		return f.Apps().V1().ReplicaSets().Informer()
	},
	appsv1.SchemeGroupVersion.WithResource("deployments"): func(f *sharedInformerFactory) processor.SharedIndexInformer {
		return f.Apps().V1().Deployments().Informer()
	},
}

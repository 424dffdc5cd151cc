//lint:file-ignore SA1019 core/v1 Endpoints is deprecated, but client-go v0.37.2 still has its informer and lister, which this mirrors

package lister

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// Each typed lister below is two interfaces and a struct that embeds
// ResourceIndexer (which supplies List and Get) and adds the one method whose
// name Go generics cannot produce: Pods(ns), ReplicaSets(ns), ... . The
// resource names ("pod", "replicaset") are singular, as in client-go's
// generated code, so NotFound messages read the same: `pod "x" not found`.

// PodLister lists Pods from the informer's cache.
//
// Mirrors [k8s.io/client-go/listers/core/v1.PodLister] (listers/core/v1/pod.go).
type PodLister interface {
	// List returns the Pods of every namespace that match selector. They are
	// the cache's own objects: read-only.
	List(selector labels.Selector) ([]*corev1.Pod, error)
	// Pods narrows the lister to one namespace.
	Pods(namespace string) PodNamespaceLister
}

// PodNamespaceLister lists and gets Pods of one namespace.
//
// Mirrors [k8s.io/client-go/listers/core/v1.PodNamespaceLister] (listers/core/v1/pod.go).
type PodNamespaceLister interface {
	List(selector labels.Selector) ([]*corev1.Pod, error)
	Get(name string) (*corev1.Pod, error)
}

// NewPodLister returns a PodLister over an indexer of Pods.
//
// Mirrors [k8s.io/client-go/listers/core/v1.NewPodLister] (listers/core/v1/pod.go).
func NewPodLister(indexer store.Indexer) PodLister {
	return podLister{New[*corev1.Pod](indexer, corev1.Resource("pod"))}
}

type podLister struct{ ResourceIndexer[*corev1.Pod] }

func (l podLister) Pods(namespace string) PodNamespaceLister {
	return NewNamespaced(l.ResourceIndexer, namespace)
}

// ConfigMapLister lists ConfigMaps from the informer's cache.
//
// Mirrors [k8s.io/client-go/listers/core/v1.ConfigMapLister] (listers/core/v1/configmap.go).
type ConfigMapLister interface {
	List(selector labels.Selector) ([]*corev1.ConfigMap, error)
	ConfigMaps(namespace string) ConfigMapNamespaceLister
}

// ConfigMapNamespaceLister lists and gets ConfigMaps of one namespace.
//
// Mirrors [k8s.io/client-go/listers/core/v1.ConfigMapNamespaceLister] (listers/core/v1/configmap.go).
type ConfigMapNamespaceLister interface {
	List(selector labels.Selector) ([]*corev1.ConfigMap, error)
	Get(name string) (*corev1.ConfigMap, error)
}

// NewConfigMapLister returns a ConfigMapLister over an indexer of ConfigMaps.
//
// Mirrors [k8s.io/client-go/listers/core/v1.NewConfigMapLister] (listers/core/v1/configmap.go).
func NewConfigMapLister(indexer store.Indexer) ConfigMapLister {
	return configMapLister{New[*corev1.ConfigMap](indexer, corev1.Resource("configmap"))}
}

type configMapLister struct {
	ResourceIndexer[*corev1.ConfigMap]
}

func (l configMapLister) ConfigMaps(namespace string) ConfigMapNamespaceLister {
	return NewNamespaced(l.ResourceIndexer, namespace)
}

// EndpointsLister lists Endpoints from the informer's cache.
//
// Mirrors [k8s.io/client-go/listers/core/v1.EndpointsLister] (listers/core/v1/endpoints.go).
type EndpointsLister interface {
	List(selector labels.Selector) ([]*corev1.Endpoints, error)
	Endpoints(namespace string) EndpointsNamespaceLister
}

// EndpointsNamespaceLister lists and gets Endpoints of one namespace.
//
// Mirrors [k8s.io/client-go/listers/core/v1.EndpointsNamespaceLister] (listers/core/v1/endpoints.go).
type EndpointsNamespaceLister interface {
	List(selector labels.Selector) ([]*corev1.Endpoints, error)
	Get(name string) (*corev1.Endpoints, error)
}

// NewEndpointsLister returns an EndpointsLister over an indexer of Endpoints.
//
// Mirrors [k8s.io/client-go/listers/core/v1.NewEndpointsLister] (listers/core/v1/endpoints.go).
func NewEndpointsLister(indexer store.Indexer) EndpointsLister {
	return endpointsLister{New[*corev1.Endpoints](indexer, corev1.Resource("endpoints"))}
}

type endpointsLister struct {
	ResourceIndexer[*corev1.Endpoints]
}

func (l endpointsLister) Endpoints(namespace string) EndpointsNamespaceLister {
	return NewNamespaced(l.ResourceIndexer, namespace)
}

// DeploymentLister lists Deployments from the informer's cache.
//
// Mirrors [k8s.io/client-go/listers/apps/v1.DeploymentLister] (listers/apps/v1/deployment.go).
type DeploymentLister interface {
	List(selector labels.Selector) ([]*appsv1.Deployment, error)
	Deployments(namespace string) DeploymentNamespaceLister
}

// DeploymentNamespaceLister lists and gets Deployments of one namespace.
//
// Mirrors [k8s.io/client-go/listers/apps/v1.DeploymentNamespaceLister] (listers/apps/v1/deployment.go).
type DeploymentNamespaceLister interface {
	List(selector labels.Selector) ([]*appsv1.Deployment, error)
	Get(name string) (*appsv1.Deployment, error)
}

// NewDeploymentLister returns a DeploymentLister over an indexer of Deployments.
//
// Mirrors [k8s.io/client-go/listers/apps/v1.NewDeploymentLister] (listers/apps/v1/deployment.go).
func NewDeploymentLister(indexer store.Indexer) DeploymentLister {
	return deploymentLister{New[*appsv1.Deployment](indexer, appsv1.Resource("deployment"))}
}

type deploymentLister struct {
	ResourceIndexer[*appsv1.Deployment]
}

func (l deploymentLister) Deployments(namespace string) DeploymentNamespaceLister {
	return NewNamespaced(l.ResourceIndexer, namespace)
}

// ReplicaSetLister lists ReplicaSets from the informer's cache, and finds the
// ReplicaSets that own a Pod by selector.
//
// Mirrors [k8s.io/client-go/listers/apps/v1.ReplicaSetLister]
// (listers/apps/v1/replicaset.go and replicaset_expansion.go).
type ReplicaSetLister interface {
	List(selector labels.Selector) ([]*appsv1.ReplicaSet, error)
	ReplicaSets(namespace string) ReplicaSetNamespaceLister
	// GetPodReplicaSets returns the ReplicaSets in pod's namespace whose
	// selector matches pod's labels, or an error when there are none.
	GetPodReplicaSets(pod *corev1.Pod) ([]*appsv1.ReplicaSet, error)
}

// ReplicaSetNamespaceLister lists and gets ReplicaSets of one namespace.
//
// Mirrors [k8s.io/client-go/listers/apps/v1.ReplicaSetNamespaceLister] (listers/apps/v1/replicaset.go).
type ReplicaSetNamespaceLister interface {
	List(selector labels.Selector) ([]*appsv1.ReplicaSet, error)
	Get(name string) (*appsv1.ReplicaSet, error)
}

// NewReplicaSetLister returns a ReplicaSetLister over an indexer of ReplicaSets.
//
// Mirrors [k8s.io/client-go/listers/apps/v1.NewReplicaSetLister] (listers/apps/v1/replicaset.go).
func NewReplicaSetLister(indexer store.Indexer) ReplicaSetLister {
	return replicaSetLister{New[*appsv1.ReplicaSet](indexer, appsv1.Resource("replicaset"))}
}

type replicaSetLister struct {
	ResourceIndexer[*appsv1.ReplicaSet]
}

func (l replicaSetLister) ReplicaSets(namespace string) ReplicaSetNamespaceLister {
	return NewNamespaced(l.ResourceIndexer, namespace)
}

// GetPodReplicaSets is the "lister expansion" of upstream's generated code:
// a hand-written query on top of the generated List. Controllers use it to
// find a pod's owner by selector when ownerReferences are not enough (an
// orphaned pod about to be adopted).
func (l replicaSetLister) GetPodReplicaSets(pod *corev1.Pod) ([]*appsv1.ReplicaSet, error) {
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("no ReplicaSets found for pod %v because it has no labels", pod.Name)
	}
	candidates, err := l.ReplicaSets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var owners []*appsv1.ReplicaSet
	for _, rs := range candidates {
		// ReplicaSets("") is every namespace, so a pod with no namespace
		// would otherwise match ReplicaSets anywhere.
		if rs.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		// A selector that does not parse matches nothing. An empty one would
		// match every pod, which would make one broken ReplicaSet claim the
		// whole namespace, so it matches nothing too.
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		owners = append(owners, rs)
	}
	if len(owners) == 0 {
		return nil, fmt.Errorf("could not find ReplicaSet for pod %s in namespace %s with labels: %v", pod.Name, pod.Namespace, pod.Labels)
	}
	return owners, nil
}

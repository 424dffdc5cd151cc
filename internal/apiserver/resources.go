//lint:file-ignore SA1019 core/v1 Endpoints is deprecated, but client-go v0.37.2 still has its informer and lister, which this mirrors

package apiserver

import (
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is one kind of object the server serves.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
	newObj     func() runtime.Object
	newList    func() runtime.Object
}

// GVK is the resource's group, version and kind.
func (r Resource) GVK() schema.GroupVersionKind { return r.GVR.GroupVersion().WithKind(r.Kind) }

// The resources served.
var (
	Pods = Resource{corev1.SchemeGroupVersion.WithResource("pods"), "Pod", true,
		func() runtime.Object { return &corev1.Pod{} }, func() runtime.Object { return &corev1.PodList{} }}
	ConfigMaps = Resource{corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap", true,
		func() runtime.Object { return &corev1.ConfigMap{} }, func() runtime.Object { return &corev1.ConfigMapList{} }}
	// Secrets has no typed informer in chapter 6: the factory's ForResource
	// serves it as unstructured objects.
	Secrets = Resource{corev1.SchemeGroupVersion.WithResource("secrets"), "Secret", true,
		func() runtime.Object { return &corev1.Secret{} }, func() runtime.Object { return &corev1.SecretList{} }}
	Endpoints = Resource{corev1.SchemeGroupVersion.WithResource("endpoints"), "Endpoints", true,
		func() runtime.Object { return &corev1.Endpoints{} }, func() runtime.Object { return &corev1.EndpointsList{} }}
	ReplicaSets = Resource{appsv1.SchemeGroupVersion.WithResource("replicasets"), "ReplicaSet", true,
		func() runtime.Object { return &appsv1.ReplicaSet{} }, func() runtime.Object { return &appsv1.ReplicaSetList{} }}
	Deployments = Resource{appsv1.SchemeGroupVersion.WithResource("deployments"), "Deployment", true,
		func() runtime.Object { return &appsv1.Deployment{} }, func() runtime.Object { return &appsv1.DeploymentList{} }}
)

var allResources = []Resource{Pods, ConfigMaps, Secrets, Endpoints, ReplicaSets, Deployments}

// ResourceFor finds the resource of a GroupVersionResource.
func ResourceFor(gvr schema.GroupVersionResource) (Resource, bool) {
	for _, r := range allResources {
		if r.GVR == gvr {
			return r, true
		}
	}
	return Resource{}, false
}

// resourceOf finds the resource an object belongs to by its Go type.
func resourceOf(obj runtime.Object) (Resource, error) {
	t := reflect.TypeOf(obj)
	for _, r := range allResources {
		if reflect.TypeOf(r.newObj()) == t {
			return r, nil
		}
	}
	return Resource{}, fmt.Errorf("the embedded API server does not serve objects of type %T", obj)
}

// Package configmaps is workshop exercise 01-store/2-configmaps.
//
// # An index with many values
//
// Kind: build. Minutes: 10. Needs: none. Practises: docs/01-store.md, "Indexes and their invariant".
//
// When a ConfigMap changes, a controller must restart the pods that mount
// it: "which pods mount ConfigMap X?" is an index with many values per pod.
// Write ByConfigMap: the names of the ConfigMaps a pod mounts through
// spec.volumes[].configMap, each name once, in the order of the volumes.
//
// A pod that mounts none has no values: it must not appear under "".
// (Chapter 1's MetaNamespaceIndexFunc does return "" for cluster-scoped
// objects, and rightly: there "" is a real answer, "no namespace". Here it
// would be a ConfigMap that does not exist.) Anything that is not a pod is
// an error naming the type it got.
package configmaps

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// ByConfigMap returns the names of the ConfigMaps pod volumes come from.
func ByConfigMap(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("byConfigMap: want *v1.Pod, got %T", obj)
	}
	var names []string
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && !slices.Contains(names, v.ConfigMap.Name) {
			names = append(names, v.ConfigMap.Name)
		}
	}
	return names, nil
}

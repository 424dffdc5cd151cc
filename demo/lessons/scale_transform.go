package lessons

import "k8s.io/apimachinery/pkg/api/meta"

// stripManagedFields is the transform the scale lesson sets on its pods
// (internal/scalegen's TemplatePod): it drops an object's managedFields
// before the informer stores it, as controller-runtime's
// cache.TransformStripManagedFields does (client-go v0.37.2 ships no such
// function). It changes the object it is given, which a transform may: the
// informer hands it a copy that nothing else holds yet.
func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

package store

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// KeyFunc computes the key an object is filed under.
//
// Mirrors [k8s.io/client-go/tools/cache.KeyFunc] (store.go).
type KeyFunc func(obj any) (string, error)

// KeyError is returned when a [KeyFunc] fails for an object; it carries the
// object so the caller can say which one could not be stored.
//
// Mirrors [k8s.io/client-go/tools/cache.KeyError] (store.go); the message has
// the same wording so logs read the same with either implementation.
type KeyError struct {
	Obj any
	Err error
}

// Error implements error.
func (k KeyError) Error() string {
	return fmt.Sprintf("couldn't create key for object %+v: %v", k.Obj, k.Err)
}

// Unwrap lets errors.Is and errors.As see the cause.
func (k KeyError) Unwrap() error { return k.Err }

// ExplicitKey is a key handed to the store in place of an object. Listers and
// the DeltaFIFO use it when they know a key but no longer hold the object (for
// example, deleting by key).
//
// Mirrors [k8s.io/client-go/tools/cache.ExplicitKey] (store.go).
type ExplicitKey string

// MetaNamespaceKeyFunc files an object under "namespace/name", or just "name"
// when the namespace is empty. It is the key function of every informer cache.
// An [ExplicitKey] is returned unchanged.
//
// Why this shape: it is unique per object within one resource (the API server
// guarantees name uniqueness per namespace), it is readable in logs, and it can
// be split back with [SplitMetaNamespaceKey] so a workqueue can carry keys
// instead of objects.
//
// Mirrors [k8s.io/client-go/tools/cache.MetaNamespaceKeyFunc] (store.go).
func MetaNamespaceKeyFunc(obj any) (string, error) {
	if key, ok := obj.(ExplicitKey); ok {
		return string(key), nil
	}
	name, err := ObjectToName(obj)
	if err != nil {
		return "", err
	}
	return name.String(), nil
}

// SplitMetaNamespaceKey is the inverse of [MetaNamespaceKeyFunc]: "ns/name"
// gives ("ns", "name"), "name" gives ("", "name"); anything with more than one
// slash is an error, because no namespace or name may contain one.
//
// Mirrors [k8s.io/client-go/tools/cache.SplitMetaNamespaceKey] (store.go).
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	first := strings.IndexByte(key, '/')
	if first < 0 {
		return "", key, nil
	}
	if strings.IndexByte(key[first+1:], '/') >= 0 {
		return "", "", fmt.Errorf("unexpected key format: %q", key)
	}
	return key[:first], key[first+1:], nil
}

// ObjectName names an object of a kind the context already knows: a namespace
// (empty for cluster-scoped objects) and a name.
//
// Mirrors [k8s.io/client-go/tools/cache.ObjectName] (object-names.go).
type ObjectName struct {
	Namespace string
	Name      string
}

// NewObjectName builds an ObjectName.
//
// Mirrors [k8s.io/client-go/tools/cache.NewObjectName] (object-names.go).
func NewObjectName(namespace, name string) ObjectName {
	return ObjectName{Namespace: namespace, Name: name}
}

// Parts returns the namespace and the name.
//
// Mirrors [k8s.io/client-go/tools/cache.ObjectName.Parts] (object-names.go).
func (n ObjectName) Parts() (namespace, name string) { return n.Namespace, n.Name }

// String is the store key: "namespace/name", or "name" with no namespace.
// Note that [types.NamespacedName.String] differs: it prints "/name" for an
// empty namespace, which is why the two must not be mixed as cache keys.
//
// Mirrors [k8s.io/client-go/tools/cache.ObjectName.String] (object-names.go).
func (n ObjectName) String() string {
	if n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "/" + n.Name
}

// AsNamespacedName converts to the apimachinery type.
//
// Mirrors [k8s.io/client-go/tools/cache.ObjectName.AsNamespacedName] (object-names.go).
func (n ObjectName) AsNamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: n.Namespace, Name: n.Name}
}

// ParseObjectName parses a store key back into an ObjectName.
//
// Mirrors [k8s.io/client-go/tools/cache.ParseObjectName] (object-names.go).
func ParseObjectName(key string) (ObjectName, error) {
	ns, name, err := SplitMetaNamespaceKey(key)
	return ObjectName{Namespace: ns, Name: name}, err
}

// NamespacedNameAsObjectName converts from the apimachinery type.
//
// Mirrors [k8s.io/client-go/tools/cache.NamespacedNameAsObjectName] (object-names.go).
func NamespacedNameAsObjectName(nn types.NamespacedName) ObjectName {
	return ObjectName{Namespace: nn.Namespace, Name: nn.Name}
}

// ObjectToName reads the namespace and name from any object with ObjectMeta.
// An object without metadata (a string, a struct of your own) is an error that
// says so, rather than a key of "".
//
// Mirrors [k8s.io/client-go/tools/cache.ObjectToName] (store.go).
func ObjectToName(obj any) (ObjectName, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ObjectName{}, fmt.Errorf("object has no meta: %v", err)
	}
	return MetaObjectToName(m), nil
}

// MetaObjectToName is [ObjectToName] for a caller that already holds the metadata.
//
// Mirrors [k8s.io/client-go/tools/cache.MetaObjectToName] (store.go).
func MetaObjectToName(obj metav1.Object) ObjectName {
	return ObjectName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

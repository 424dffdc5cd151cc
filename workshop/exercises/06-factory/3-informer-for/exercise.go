// Package informerfor is workshop exercise 06-factory/3-informer-for.
//
// # Build InformerFor
//
// Kind: build. Minutes: 10. Needs: none. Practises: docs/06-factory.md, "The idea".
//
// The heart of a shared informer factory is one method: InformerFor(obj,
// newFunc) returns the informer for obj's Go type, calling newFunc only
// the first time that type is asked for; every later caller, whatever its
// newFunc, gets the same informer. Many controllers call it at once from
// their own goroutines, so it must be safe for concurrent use, and newFunc
// must run once per type even then.
//
// Write Registry.InformerFor (key by reflect.TypeOf(obj)). The checker
// asks for pods and ConfigMaps from 50 goroutines at once.
package informerfor

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
)

// Registry hands out one informer per type of object.
type Registry struct {
	mu        sync.Mutex
	informers map[any]processor.SharedIndexInformer
}

// InformerFor returns the informer for obj's type, made by newFunc the
// first time.
func (r *Registry) InformerFor(obj runtime.Object, newFunc func() processor.SharedIndexInformer) processor.SharedIndexInformer {
	return newFunc()
}

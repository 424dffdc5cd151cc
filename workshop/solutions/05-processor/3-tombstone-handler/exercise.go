// Package tombstonehandler is workshop exercise 05-processor/3-tombstone-handler.
//
// # A handler that survives DeletedFinalStateUnknown
//
// Kind: build. Minutes: 10. Needs: none. Practises: docs/04-deltafifo.md, "Tombstones: why handlers must expect DeletedFinalStateUnknown".
//
// Live is a ResourceEventHandler that keeps the set of pod keys
// ("namespace/name") it has been told exist: OnAdd adds the pod's key,
// OnDelete removes it, OnUpdate keeps it. Finish it. The catch: OnDelete
// receives either a *corev1.Pod or, when the deletion was only discovered
// by a relist, a deltafifo.DeletedFinalStateUnknown whose Key is the key
// and whose Obj is the pod's last known state. A handler that type-asserts
// *corev1.Pod panics, or leaks the key forever.
//
// The checker runs chapter 5's informer (on the RealFIFO, its default)
// with Live, loses a delete while the server is down, and requires Live's
// keys to equal the cache's afterwards.
package tombstonehandler

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"

	deltafifo "github.com/informer-anatomy/informer-anatomy/chapters/04-deltafifo"
)

// Live is the set of pod keys a handler has been told exist.
type Live struct {
	mu   sync.Mutex
	keys map[string]bool
}

// Keys returns the live keys, sorted.
func (h *Live) Keys() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for k := range h.keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (h *Live) set(key string, live bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.keys == nil {
		h.keys = map[string]bool{}
	}
	if live {
		h.keys[key] = true
	} else {
		delete(h.keys, key)
	}
}

// OnUpdate keeps the pod.
func (h *Live) OnUpdate(_, newObj any) { h.OnAdd(newObj, false) }

// OnAdd records the pod as live.
func (h *Live) OnAdd(obj any, isInInitialList bool) {
	if pod, ok := obj.(*corev1.Pod); ok {
		h.set(pod.Namespace+"/"+pod.Name, true)
	}
}

// OnDelete forgets the pod, whether obj is a pod or a tombstone.
func (h *Live) OnDelete(obj any) {
	switch o := obj.(type) {
	case *corev1.Pod:
		h.set(o.Namespace+"/"+o.Name, false)
	case deltafifo.DeletedFinalStateUnknown:
		h.set(o.Key, false)
	}
}

package processor

import (
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// Informer identity, client-go 1.36's answer to "which informer is this?"
// when one process runs several factories: a name registered once per
// process (the component, say "scheduler"), and per resource an
// identifier that is "reserved" only for the first informer of that name
// and resource. Upstream publishes metrics only for reserved identifiers;
// ours has no metrics, and uses the identifier's resource to name the
// informer in spans.

// names is the process-wide registry of informer names (guarded by its
// mutex): a name is in it while reserved.
var names = struct {
	sync.Mutex
	byName map[string]*InformerName
}{byName: map[string]*InformerName{}}

// InformerName is a registered name for the informers of one component.
//
// Mirrors [k8s.io/client-go/tools/cache.InformerName] (identity.go).
type InformerName struct {
	name string

	mu sync.Mutex
	// reserved: the name is registered (until Release). Guarded by mu,
	// and shared with every identifier handed out, which Release clears.
	reserved *atomic.Bool
	gvrs     map[schema.GroupVersionResource]*atomic.Bool
}

// NewInformerName registers name; a name already registered and not
// released is an error, as is "".
//
// Mirrors [k8s.io/client-go/tools/cache.NewInformerName] (identity.go).
func NewInformerName(name string) (*InformerName, error) {
	if name == "" {
		return nil, fmt.Errorf("informer name cannot be empty")
	}
	names.Lock()
	defer names.Unlock()
	if old, ok := names.byName[name]; ok && old.reserved.Load() {
		return nil, fmt.Errorf("informer name %q is already registered", name)
	}
	n := &InformerName{name: name, reserved: &atomic.Bool{}, gvrs: map[schema.GroupVersionResource]*atomic.Bool{}}
	n.reserved.Store(true)
	names.byName[name] = n
	return n, nil
}

// WithResource returns the identifier of this name's informer for gvr. The
// first one asked for a resource is reserved; a second for the same
// resource is not (and a warning is logged). A nil name gives an
// identifier with the resource only, never reserved.
//
// Mirrors [k8s.io/client-go/tools/cache.InformerName.WithResource] (identity.go).
func (n *InformerName) WithResource(gvr schema.GroupVersionResource) InformerNameAndResource {
	if n == nil {
		return InformerNameAndResource{gvr: gvr}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	id := InformerNameAndResource{name: n.name, gvr: gvr, reserved: &atomic.Bool{}}
	if !n.reserved.Load() {
		return id
	}
	if _, dup := n.gvrs[gvr]; dup {
		// Logged through klog, as upstream logs it (klog.TODO().Error):
		// there is no context here to take a logger from.
		klog.TODO().Error(nil, "Duplicate informer registration - the second is not reserved", "informerName", n.name,
			"group", gvr.Group, "version", gvr.Version, "resource", gvr.Resource)
		return id
	}
	id.reserved.Store(true)
	n.gvrs[gvr] = id.reserved
	return id
}

// Release unregisters the name and un-reserves every identifier it gave,
// so the name can be registered again.
//
// Mirrors [k8s.io/client-go/tools/cache.InformerName.Release] (identity.go).
func (n *InformerName) Release() {
	if n == nil {
		return
	}
	n.mu.Lock()
	for _, r := range n.gvrs {
		r.Store(false)
	}
	n.gvrs = map[schema.GroupVersionResource]*atomic.Bool{}
	n.reserved.Store(false)
	n.mu.Unlock()
	names.Lock()
	defer names.Unlock()
	if names.byName[n.name] == n {
		delete(names.byName, n.name)
	}
}

// Name is the registered name ("" for nil).
//
// Mirrors [k8s.io/client-go/tools/cache.InformerName.Name] (identity.go).
func (n *InformerName) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// InformerNameAndResource identifies one informer: its name and resource.
// The zero value identifies nothing.
//
// Mirrors [k8s.io/client-go/tools/cache.InformerNameAndResource] (identity.go).
type InformerNameAndResource struct {
	name     string
	gvr      schema.GroupVersionResource
	reserved *atomic.Bool
}

// Reserved: this is the first identifier of its name and resource, and
// the name has not been released.
func (n InformerNameAndResource) Reserved() bool { return n.reserved != nil && n.reserved.Load() }

// Name is the informer name, or "".
func (n InformerNameAndResource) Name() string { return n.name }

// GroupVersionResource is the resource.
func (n InformerNameAndResource) GroupVersionResource() schema.GroupVersionResource { return n.gvr }

// ResetInformerNamesForTesting releases every registered name.
//
// Mirrors [k8s.io/client-go/tools/cache.ResetInformerNamesForTesting] (identity.go).
func ResetInformerNamesForTesting() {
	names.Lock()
	all := make([]*InformerName, 0, len(names.byName))
	for _, n := range names.byName {
		all = append(all, n)
	}
	names.Unlock()
	for _, n := range all {
		n.Release()
	}
}

package dropin

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"sync"
	"unique"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// StringTableOptions configures [NewStringTable]. Ours: client-go has no
// counterpart.
type StringTableOptions struct {
	// MaxBytes bounds what the table keeps: the bytes of its values plus
	// an estimate of each entry's overhead (64 bytes), over its two
	// generations (see [StringTable]), each at most half of it. 0 means
	// 64 MiB.
	MaxBytes int
	// ShareFieldsV1 also keeps one copy of each managedFields entry's
	// FieldsV1 bytes (FieldsV1.Raw), shared by every object whose entry has
	// the same bytes. Unlike strings, a []byte can be written to: a handler
	// that writes into a cached object's FieldsV1.Raw (already a breach of
	// client-go's contract, which says handlers and lister callers must not
	// mutate cached objects) then changes it in every object that shares it.
	// Off by default.
	//
	// Built with apimachinery's build tag fieldsv1string (v0.37+), FieldsV1
	// holds a unique.Handle[string] instead of bytes: every FieldsV1 is
	// then kept once by apimachinery itself, cannot be written, and this
	// option does nothing.
	ShareFieldsV1 bool
}

// entryOverhead is what one entry of a Go map[string]string costs beside
// its value's bytes, roughly: a key and a value header (32 bytes) and the
// swiss table's slot and control byte, rounded up. MaxBytes counts it so
// that a table of many short values is bounded too.
const entryOverhead = 64

// maxShared is the longest string a table keeps: longer ones (a
// last-applied-configuration annotation, a condition's long message) are
// rarely the same in two objects, and one would take the room of many
// short values that are.
const maxShared = 256

// seenSlots is how many values a table remembers having seen once (see
// canon_locked): 16 bytes each, 1 MiB, plus the strings they keep alive
// (at most 256 bytes each, most far shorter) until overwritten.
const seenSlots = 1 << 16

// seenRawSlots is seenSlots for FieldsV1: fewer, since each keeps a
// FieldsV1 of a few hundred bytes to a few KiB alive until overwritten.
const seenRawSlots = 1 << 12

// maxSharedRaw is the longest FieldsV1 a table keeps.
const maxSharedRaw = 64 << 10

// StringTable keeps one copy of the strings that repeat across the objects
// of informers (namespaces, label and annotation keys and values, owner
// references, managedFields' managers and API versions, images, node names,
// condition types and reasons, …) and makes every object it is given point
// to that copy, so the cache holds each such value once instead of once per
// object. Its [StringTable.Transform] is a cache.TransformFunc: set it with
// SetTransform, alone or after a transform of your own.
//
// Nothing a handler or a lister returns changes: a string's bytes cannot be
// written, so two objects sharing one are what they were; every object is
// reflect.DeepEqual (and apiequality.Semantic.DeepEqual) to what it was. Only
// [StringTableOptions.ShareFieldsV1] shares something writable.
//
// What it walks: a *corev1.Pod whole (metadata, spec and status); any other
// object that embeds metav1.ObjectMeta (typed objects,
// *metav1.PartialObjectMetadata) in its TypeMeta and ObjectMeta only, its
// spec and status left as they are; an *unstructured.Unstructured's every
// map key at any depth, and its apiVersion, kind and metadata's values.
// Strings longer than 256 bytes are left alone.
//
// The table is bounded ([StringTableOptions.MaxBytes]) and kept in two
// generations. A value is kept only once a second object brings it (see
// canon_locked), so values that each object has alone (names, UIDs,
// resourceVersions, IPs) take no room. Kept values go into the newer
// generation; when it has taken half of MaxBytes, the older generation is
// dropped, the newer becomes the older, and an empty one starts. A value
// found in the older generation is carried into the newer one, so what
// objects keep bringing stays shared, and what none has brought for a
// whole generation is forgotten. Why: objects churn (every rollout brings
// new ReplicaSet names and pod-template hashes), and a table that kept
// every value it ever took would fill with the gone ones and then share
// nothing new. Objects that hold a forgotten value keep their copy; the
// next objects that bring it share a new one. Transform is idempotent, and a
// second call on an object it has seen (client-go's queues transform a
// streamed object twice: the watch-list stream's temporary store, then
// Replace) finds it pointing to the table's copies already and writes
// nothing, unless between the two calls other objects made one of its
// values a kept one from another string (see canon_locked): that field is
// then written again, with the same contents. Neither library hands the
// transform an object a lister can already see. A table may be shared by several
// informers, and Transform is safe to call from many goroutines at once.
//
// Ours: client-go has no counterpart. The nearest upstream idea is
// controller-runtime's cache.TransformStripManagedFields
// (pkg/cache/cache.go), which drops managedFields instead; the two compose
// (strip first).
type StringTable struct {
	opts StringTableOptions

	mu sync.Mutex
	// Guarded by mu: the newer generation (strs, raws, and the bytes it
	// counts against MaxBytes/2) and the older (old...); rotations is how
	// many times the newer became the older.
	strs, oldStrs   map[string]string
	raws, oldRaws   map[string][]byte
	bytes, oldBytes int
	rotations       int

	// seen remembers one sighting of values the table does not keep yet,
	// one per slot (see canon_locked); seed hashes them.
	seen    *[seenSlots]string
	seenRaw *[seenRawSlots][]byte
	seed    maphash.Seed
	tick    uint64 // which of a value's two slots the next miss overwrites

	// viaUnique makes canon_locked use the unique package instead of strs:
	// only for sharestrings_measure_test.go, which compares the two.
	viaUnique bool
}

// NewStringTable returns an empty table configured by opts. Ours; see
// [StringTable].
func NewStringTable(opts StringTableOptions) *StringTable {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 64 << 20
	}
	return &StringTable{opts: opts, strs: map[string]string{}, raws: map[string][]byte{}, oldStrs: map[string]string{}, oldRaws: map[string][]byte{},
		seen: new([seenSlots]string), seenRaw: new([seenRawSlots][]byte), seed: maphash.MakeSeed()}
}

// StringTableStats is what a [StringTable] holds. Ours.
type StringTableStats struct {
	// Strings and FieldsV1 are how many values its two generations keep
	// (a value carried from the older into the newer counts in both).
	Strings, FieldsV1 int
	// Bytes is what it counts against MaxBytes.
	Bytes int
	// Rotations is how many times the newer generation, having taken half
	// of MaxBytes, became the older (the older dropped).
	Rotations int
}

// Stats reports what t holds. Ours.
func (t *StringTable) Stats() StringTableStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return StringTableStats{Strings: len(t.strs) + len(t.oldStrs), FieldsV1: len(t.raws) + len(t.oldRaws),
		Bytes: t.bytes + t.oldBytes, Rotations: t.rotations}
}

// ErrNilObject is what [StringTable.Transform] returns for a nil object
// (untyped nil, or a nil pointer of an object type): no reflector hands a
// transform one, so something before it in a chain of transforms returned
// nil by mistake. Ours.
var ErrNilObject = errors.New("dropin: StringTable.Transform was given a nil object; a transform before it in the chain returned nil")

// Transform makes obj's repeated strings point to t's copies and returns
// obj itself, changed in place (client-go's TransformFunc may change its
// argument: the queue hands the transform the object it just decoded).
// It has cache.TransformFunc's shape:
//
//	informer.SetTransform(table.Transform)
//
// A cache.DeletedFinalStateUnknown is returned as it came (client-go's
// queues never transform one: its object went through the transform when
// it was cached), and so is any value it does not know (one with no
// metav1.ObjectMeta, not an Unstructured). A nil object is an error,
// [ErrNilObject]. Ours; see [StringTable].
func (t *StringTable) Transform(obj any) (any, error) {
	if obj == nil {
		return nil, ErrNilObject
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return obj, fmt.Errorf("%w (a nil %T)", ErrNilObject, obj)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch o := obj.(type) {
	case cache.DeletedFinalStateUnknown, *cache.DeletedFinalStateUnknown:
		return obj, nil
	case *corev1.Pod:
		t.typeMeta(&o.TypeMeta)
		t.objectMeta(&o.ObjectMeta)
		t.podSpec(&o.Spec)
		t.podStatus(&o.Status)
	case *unstructured.Unstructured:
		t.unstructured(o.Object)
	case *unstructured.UnstructuredList:
		t.unstructured(o.Object)
		for i := range o.Items {
			t.unstructured(o.Items[i].Object)
		}
	default:
		if k, ok := obj.(interface{ GetObjectKind() schema.ObjectKind }); ok {
			if tm, ok := k.GetObjectKind().(*metav1.TypeMeta); ok {
				t.typeMeta(tm)
			}
		}
		if m, ok := obj.(interface{ GetObjectMeta() metav1.Object }); ok {
			if om, ok := m.GetObjectMeta().(*metav1.ObjectMeta); ok {
				t.objectMeta(om)
			}
		}
	}
	return obj, nil
}

// same reports whether a and b are one string in memory (not only equal).
func same(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// canon_locked returns the table's copy of v, if it keeps one, else v.
//
// A value is kept from its second sighting in another string: the first
// is remembered in one of two slots of seen (both chosen by the value's
// hash; the one overwritten alternates, so two common values whose slots
// collide cannot keep pushing each other out), and when a later object
// brings the same value while a slot still holds it, the string in the
// slot becomes the table's copy. So a value that every object has alone (a
// name, a UID, a pod's IP) never takes room in the table, and a second
// transform of the same object (client-go's queues transform a streamed
// object twice) is not a second sighting. The first object holding a
// repeated value is the one whose string the others then share: a kept
// value is never replaced, so an object whose values the table keeps is
// not written to again.
func (t *StringTable) canon_locked(v string) string {
	if v == "" || len(v) > maxShared {
		return v
	}
	if t.viaUnique {
		return unique.Make(v).Value()
	}
	if c, ok := t.strs[v]; ok {
		return c
	}
	if c, ok := t.oldStrs[v]; ok {
		t.keepString_locked(c) // still brought: carried into the newer generation
		return c
	}
	h := maphash.String(t.seed, v)
	a, b := &t.seen[h&(seenSlots-1)], &t.seen[(h>>32)&(seenSlots-1)]
	var c string
	switch {
	case *a == v:
		c, *a = *a, ""
	case *b == v:
		c, *b = *b, ""
	default:
		t.tick++
		if t.tick&1 == 0 {
			*a = v
		} else {
			*b = v
		}
		return v
	}
	if same(c, v) {
		// The same string again: the same object transformed twice (or
		// two objects sharing one string already). Not a repeat.
		return v
	}
	if !t.keepString_locked(c) {
		return v
	}
	return c
}

// keepString_locked puts c in the newer generation, starting a new one
// first if it has no room for c; false if c alone is more than a
// generation may hold.
func (t *StringTable) keepString_locked(c string) bool {
	if !t.room_locked(len(c) + entryOverhead) {
		return false
	}
	t.strs[c] = c
	t.bytes += len(c) + entryOverhead
	return true
}

// room_locked makes room for n more bytes in the newer generation,
// rotating the generations if it is full: false if n is more than one
// generation may hold at all.
func (t *StringTable) room_locked(n int) bool {
	half := t.opts.MaxBytes / 2
	if n > half {
		return false
	}
	if t.bytes+n > half {
		t.oldStrs, t.oldRaws, t.oldBytes = t.strs, t.raws, t.bytes
		t.strs, t.raws, t.bytes = map[string]string{}, map[string][]byte{}, 0
		t.rotations++
	}
	return true
}

// str makes *p the table's copy, writing only if it is not already: an
// object the table has seen is not written to again (see StringTable).
func str[S ~string](t *StringTable, p *S) {
	v := string(*p)
	if c := t.canon_locked(v); !same(c, v) {
		*p = S(c)
	}
}

func strPtr[S ~string](t *StringTable, p *S) {
	if p != nil {
		str(t, p)
	}
}

func strs[S ~string](t *StringTable, s []S) {
	for i := range s {
		str(t, &s[i])
	}
}

// strMap makes m's keys and values the table's copies. Assigning to a key
// that is already in a Go map stores the key given (the runtime copies
// string keys on overwrite), so the entry's key is exchanged too; the map
// is written only for entries that change.
func strMap[K ~string, V ~string](t *StringTable, m map[K]V) {
	for k, v := range m {
		ck, cv := t.canon_locked(string(k)), t.canon_locked(string(v))
		if !same(ck, string(k)) || !same(cv, string(v)) {
			m[K(ck)] = V(cv)
		}
	}
}

// keyMap makes m's keys the table's copies, its values left as they are.
func keyMap[K ~string, V any](t *StringTable, m map[K]V) {
	for k, v := range m {
		if ck := t.canon_locked(string(k)); !same(ck, string(k)) {
			m[K(ck)] = v
		}
	}
}

func (t *StringTable) typeMeta(m *metav1.TypeMeta) {
	str(t, &m.APIVersion)
	str(t, &m.Kind)
}

func (t *StringTable) objectMeta(m *metav1.ObjectMeta) {
	str(t, &m.Namespace)
	str(t, &m.GenerateName)
	strMap(t, m.Labels)
	strMap(t, m.Annotations)
	strs(t, m.Finalizers)
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		str(t, &r.APIVersion)
		str(t, &r.Kind)
		str(t, &r.Name)
		str(t, &r.UID)
	}
	for i := range m.ManagedFields {
		f := &m.ManagedFields[i]
		str(t, &f.Manager)
		str(t, &f.Operation)
		str(t, &f.APIVersion)
		str(t, &f.FieldsType)
		str(t, &f.Subresource)
		if t.opts.ShareFieldsV1 && f.FieldsV1 != nil {
			t.fieldsV1_locked(f.FieldsV1)
		}
	}
}

// raw_locked makes *p the table's copy of its bytes, kept from their
// second sighting as canon_locked keeps a string.
func (t *StringTable) raw_locked(p *[]byte) {
	b := *p
	if len(b) == 0 || len(b) > maxSharedRaw {
		return
	}
	if c, ok := t.raws[string(b)]; ok {
		if &c[0] != &b[0] {
			*p = c
		}
		return
	}
	if c, ok := t.oldRaws[string(b)]; ok {
		if t.keepRaw_locked(c) { // still brought: carried into the newer generation
			if &c[0] != &b[0] {
				*p = c
			}
		}
		return
	}
	h := maphash.Bytes(t.seed, b)
	x, y := &t.seenRaw[h&(seenRawSlots-1)], &t.seenRaw[(h>>32)&(seenRawSlots-1)]
	var c []byte
	switch {
	case bytes.Equal(*x, b):
		c, *x = *x, nil
	case bytes.Equal(*y, b):
		c, *y = *y, nil
	default:
		t.tick++
		if t.tick&1 == 0 {
			*x = b
		} else {
			*y = b
		}
		return
	}
	if &c[0] == &b[0] {
		return // the same bytes again: not a repeat
	}
	if t.keepRaw_locked(c) {
		*p = c
	}
}

// keepRaw_locked puts c in the newer generation, as keepString_locked a
// string: the map's key is a string copy of the bytes, so they count twice.
func (t *StringTable) keepRaw_locked(c []byte) bool {
	if !t.room_locked(2*len(c) + entryOverhead) {
		return false
	}
	t.raws[string(c)] = c
	t.bytes += 2*len(c) + entryOverhead
	return true
}

func (t *StringTable) podSpec(s *corev1.PodSpec) {
	for i := range s.Volumes {
		t.volume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		t.container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		t.container(&s.Containers[i])
	}
	for i := range s.EphemeralContainers {
		t.container((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
		str(t, &s.EphemeralContainers[i].TargetContainerName)
	}
	str(t, &s.RestartPolicy)
	str(t, &s.DNSPolicy)
	strMap(t, s.NodeSelector)
	str(t, &s.ServiceAccountName)
	str(t, &s.DeprecatedServiceAccount)
	str(t, &s.NodeName)
	str(t, &s.Subdomain)
	str(t, &s.SchedulerName)
	str(t, &s.PriorityClassName)
	strPtr(t, s.RuntimeClassName)
	strPtr(t, s.PreemptionPolicy)
	for i := range s.ImagePullSecrets {
		str(t, &s.ImagePullSecrets[i].Name)
	}
	for i := range s.Tolerations {
		tl := &s.Tolerations[i]
		str(t, &tl.Key)
		str(t, &tl.Operator)
		str(t, &tl.Value)
		str(t, &tl.Effect)
	}
	keyMap(t, s.Overhead)
}

func (t *StringTable) volume(v *corev1.Volume) {
	str(t, &v.Name)
	switch {
	case v.ConfigMap != nil:
		str(t, &v.ConfigMap.Name)
		t.keyToPaths(v.ConfigMap.Items)
	case v.Secret != nil:
		str(t, &v.Secret.SecretName)
		t.keyToPaths(v.Secret.Items)
	case v.PersistentVolumeClaim != nil:
		str(t, &v.PersistentVolumeClaim.ClaimName)
	case v.HostPath != nil:
		str(t, &v.HostPath.Path)
		strPtr(t, v.HostPath.Type)
	case v.EmptyDir != nil:
		str(t, &v.EmptyDir.Medium)
	case v.DownwardAPI != nil:
		t.downwardFiles(v.DownwardAPI.Items)
	case v.Projected != nil:
		for i := range v.Projected.Sources {
			p := &v.Projected.Sources[i]
			if p.ServiceAccountToken != nil {
				str(t, &p.ServiceAccountToken.Audience)
				str(t, &p.ServiceAccountToken.Path)
			}
			if p.ConfigMap != nil {
				str(t, &p.ConfigMap.Name)
				t.keyToPaths(p.ConfigMap.Items)
			}
			if p.Secret != nil {
				str(t, &p.Secret.Name)
				t.keyToPaths(p.Secret.Items)
			}
			if p.DownwardAPI != nil {
				t.downwardFiles(p.DownwardAPI.Items)
			}
		}
	}
}

func (t *StringTable) keyToPaths(items []corev1.KeyToPath) {
	for i := range items {
		str(t, &items[i].Key)
		str(t, &items[i].Path)
	}
}

func (t *StringTable) downwardFiles(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		f := &items[i]
		str(t, &f.Path)
		if f.FieldRef != nil {
			str(t, &f.FieldRef.APIVersion)
			str(t, &f.FieldRef.FieldPath)
		}
		if f.ResourceFieldRef != nil {
			str(t, &f.ResourceFieldRef.ContainerName)
			str(t, &f.ResourceFieldRef.Resource)
		}
	}
}

func (t *StringTable) container(c *corev1.Container) {
	str(t, &c.Name)
	str(t, &c.Image)
	strs(t, c.Command)
	strs(t, c.Args)
	str(t, &c.WorkingDir)
	for i := range c.Ports {
		p := &c.Ports[i]
		str(t, &p.Name)
		str(t, &p.Protocol)
		str(t, &p.HostIP)
	}
	for i := range c.EnvFrom {
		e := &c.EnvFrom[i]
		str(t, &e.Prefix)
		if e.ConfigMapRef != nil {
			str(t, &e.ConfigMapRef.Name)
		}
		if e.SecretRef != nil {
			str(t, &e.SecretRef.Name)
		}
	}
	for i := range c.Env {
		e := &c.Env[i]
		str(t, &e.Name)
		str(t, &e.Value)
		if f := e.ValueFrom; f != nil {
			if f.FieldRef != nil {
				str(t, &f.FieldRef.APIVersion)
				str(t, &f.FieldRef.FieldPath)
			}
			if f.ResourceFieldRef != nil {
				str(t, &f.ResourceFieldRef.ContainerName)
				str(t, &f.ResourceFieldRef.Resource)
			}
			if f.ConfigMapKeyRef != nil {
				str(t, &f.ConfigMapKeyRef.Name)
				str(t, &f.ConfigMapKeyRef.Key)
			}
			if f.SecretKeyRef != nil {
				str(t, &f.SecretKeyRef.Name)
				str(t, &f.SecretKeyRef.Key)
			}
		}
	}
	keyMap(t, c.Resources.Limits)
	keyMap(t, c.Resources.Requests)
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		str(t, &m.Name)
		str(t, &m.MountPath)
		str(t, &m.SubPath)
	}
	t.probe(c.LivenessProbe)
	t.probe(c.ReadinessProbe)
	t.probe(c.StartupProbe)
	str(t, &c.TerminationMessagePath)
	str(t, &c.TerminationMessagePolicy)
	str(t, &c.ImagePullPolicy)
}

func (t *StringTable) probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.Exec != nil {
		strs(t, p.Exec.Command)
	}
	if h := p.HTTPGet; h != nil {
		str(t, &h.Path)
		str(t, &h.Port.StrVal)
		str(t, &h.Host)
		str(t, &h.Scheme)
	}
	if s := p.TCPSocket; s != nil {
		str(t, &s.Port.StrVal)
	}
}

func (t *StringTable) podStatus(s *corev1.PodStatus) {
	str(t, &s.Phase)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		str(t, &c.Type)
		str(t, &c.Status)
		str(t, &c.Reason)
		str(t, &c.Message)
	}
	str(t, &s.Reason)
	str(t, &s.Message)
	str(t, &s.NominatedNodeName)
	str(t, &s.HostIP)
	for i := range s.HostIPs {
		str(t, &s.HostIPs[i].IP)
	}
	// A pod's IP is its own, so it is not kept in the table; but its
	// PodIPs repeat it, and the first can share the PodIP's bytes.
	for i := range s.PodIPs {
		if ip := &s.PodIPs[i].IP; *ip == s.PodIP && !same(*ip, s.PodIP) {
			*ip = s.PodIP
		}
	}
	str(t, &s.QOSClass)
	t.containerStatuses(s.InitContainerStatuses)
	t.containerStatuses(s.ContainerStatuses)
	t.containerStatuses(s.EphemeralContainerStatuses)
}

func (t *StringTable) containerStatuses(cs []corev1.ContainerStatus) {
	for i := range cs {
		c := &cs[i]
		str(t, &c.Name)
		str(t, &c.Image)
		str(t, &c.ImageID)
		t.containerState(&c.State)
		t.containerState(&c.LastTerminationState)
	}
}

func (t *StringTable) containerState(s *corev1.ContainerState) {
	if w := s.Waiting; w != nil {
		str(t, &w.Reason)
		str(t, &w.Message)
	}
	if x := s.Terminated; x != nil {
		str(t, &x.Reason)
		str(t, &x.Message)
	}
}

// unstructured makes every map key in obj the table's copy, at any depth
// (a decoder allocates each key of each object: "metadata", "labels",
// every "f:…" of managedFields' fieldsV1), and the values of apiVersion,
// kind and metadata's fields that repeat (see StringTable).
func (t *StringTable) unstructured(obj map[string]any) {
	t.keysDeep(obj)
	t.valueAt(obj, "apiVersion")
	t.valueAt(obj, "kind")
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	t.valueAt(md, "namespace")
	t.valueAt(md, "generateName")
	for _, k := range []string{"labels", "annotations"} {
		if m, ok := md[k].(map[string]any); ok {
			for k := range m {
				t.valueAt(m, k)
			}
		}
	}
	t.valuesOf(md["finalizers"])
	if refs, ok := md["ownerReferences"].([]any); ok {
		for _, r := range refs {
			if r, ok := r.(map[string]any); ok {
				for _, k := range []string{"apiVersion", "kind", "name", "uid"} {
					t.valueAt(r, k)
				}
			}
		}
	}
	if mfs, ok := md["managedFields"].([]any); ok {
		for _, mf := range mfs {
			if mf, ok := mf.(map[string]any); ok {
				for _, k := range []string{"manager", "operation", "apiVersion", "fieldsType", "subresource"} {
					t.valueAt(mf, k)
				}
			}
		}
	}
}

// valueAt makes m[k], if a string, the table's copy.
func (t *StringTable) valueAt(m map[string]any, k string) {
	v, ok := m[k].(string)
	if !ok {
		return
	}
	if c := t.canon_locked(v); !same(c, v) {
		m[k] = c
	}
}

func (t *StringTable) valuesOf(v any) {
	l, ok := v.([]any)
	if !ok {
		return
	}
	for i, e := range l {
		if s, ok := e.(string); ok {
			if c := t.canon_locked(s); !same(c, s) {
				l[i] = c
			}
		}
	}
}

func (t *StringTable) keysDeep(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if ck := t.canon_locked(k); !same(ck, k) {
				v[ck] = e
			}
			t.keysDeep(e)
		}
	case []any:
		for _, e := range v {
			t.keysDeep(e)
		}
	}
}

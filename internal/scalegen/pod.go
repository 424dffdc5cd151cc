package scalegen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Namespaces is how many namespaces a population spreads over, and
// PodsPerReplicaSet how many pods share one ReplicaSet owner.
const (
	Namespaces        = 50
	PodsPerReplicaSet = 10
)

// Generator builds the pods of one seeded population. It is safe for
// concurrent use: it keeps nothing but its seed.
type Generator struct {
	seed uint64
}

// NewGenerator returns the generator of the population seed names.
func NewGenerator(seed uint64) *Generator { return &Generator{seed: seed} }

// epoch is when every generated pod was created: a fixed date, so that the
// same seed gives the same pods.
var epoch = time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)

// s returns a copy of a constant string, so that no two pods share the
// bytes of one: a decoder allocates every string it reads.
func s(v string) string { return strings.Clone(v) }

var images = []string{
	"registry.example.com/shop/checkout", "registry.example.com/shop/cart", "registry.example.com/platform/gateway",
	"docker.io/library/nginx", "quay.io/prometheus/node-exporter", "registry.example.com/data/ingest",
}

// Key is pod i's namespace/name, the key both libraries' caches file it
// under, without building the pod.
func (g *Generator) Key(i int) string {
	ns, name := g.names(i)
	return ns + "/" + name
}

func (g *Generator) names(i int) (ns, name string) {
	rs := i / PodsPerReplicaSet
	r := g.rng(uint64(i), 0)
	return "team-" + strconv.Itoa(rs%Namespaces), g.rsName(rs) + "-" + suffix(r, 5)
}

func (g *Generator) rsName(rs int) string {
	r := g.rng(uint64(rs), 1)
	return "app-" + strconv.Itoa(rs) + "-" + suffix(r, 10)
}

func (g *Generator) uid(kind, n uint64) types.UID {
	r := g.rng(n, 2+kind)
	a, b := r.Uint64(), r.Uint64()
	return types.UID(fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", uint32(a), uint16(a>>32), uint16(a>>48)&0xfff, uint16(b)&0xfff, b>>16&0xffffffffffff))
}

func (g *Generator) rng(n, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed^(stream*0x9e3779b97f4a7c15), n))
}

func suffix(r *rand.Rand, n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for k := range b {
		b[k] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func hex(r *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for k := range b {
		b[k] = digits[r.IntN(16)]
	}
	return string(b)
}

// Pod returns pod i at its version (0 when created; [Generator.Update]
// counts up) with resourceVersion rv: a new object, sharing no memory with
// any other call's.
func (g *Generator) Pod(i, version int, rv string) *corev1.Pod {
	p := &corev1.Pod{}
	g.Fill(p, i, version, rv)
	return p
}

// Update returns the pod that follows old, pod i at old's version: the next
// version with resourceVersion rv, its status changed as a kubelet changes
// it (a container restarted, the Ready condition's times moved). The spec
// and metadata other than the resourceVersion and the kubelet's
// managedFields time stay as they were.
func (g *Generator) Update(i, version int, rv string) *corev1.Pod {
	return g.Pod(i, version+1, rv)
}

// Fill writes pod i at version with resourceVersion rv into p, which must be
// zero (a LIST's Items are filled in place, as a decoder fills them).
func (g *Generator) Fill(p *corev1.Pod, i, version int, rv string) {
	ns, name := g.names(i)
	rs := i / PodsPerReplicaSet
	r := g.rng(uint64(i), 10)
	rsName := g.rsName(rs)
	hash := rsName[strings.LastIndexByte(rsName, '-')+1:]
	app := "app-" + strconv.Itoa(rs)
	uid := g.uid(0, uint64(i))
	ownerUID := g.uid(1, uint64(rs))
	node := "node-" + strconv.Itoa(r.IntN(5000)) + ".eu-west-1.compute.internal"
	image := images[rs%len(images)] + ":v1." + strconv.Itoa(rs%40) + "." + strconv.Itoa(r.IntN(10))
	podIP := "10." + strconv.Itoa(r.IntN(256)) + "." + strconv.Itoa(r.IntN(256)) + "." + strconv.Itoa(1+r.IntN(254))
	hostIP := "172.20." + strconv.Itoa(r.IntN(256)) + "." + strconv.Itoa(1+r.IntN(254))
	created := epoch.Add(time.Duration(i) * time.Second)
	scheduled := created.Add(time.Second)
	started := scheduled.Add(3 * time.Second)
	// The kubelet's latest write: it moves with every version.
	changed := started.Add(time.Duration(version) * time.Minute)

	p.ObjectMeta = metav1.ObjectMeta{
		Name:              name,
		GenerateName:      rsName + "-",
		Namespace:         ns,
		UID:               uid,
		ResourceVersion:   rv,
		CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{
			s("app.kubernetes.io/name"):    app,
			s("app.kubernetes.io/part-of"): s("shop"),
			s("pod-template-hash"):         s(hash),
			s("app.kubernetes.io/version"): "v1." + strconv.Itoa(rs%40),
		},
		Annotations: map[string]string{
			s("kubectl.kubernetes.io/restartedAt"): created.Add(-time.Hour).Format(time.RFC3339),
			s("prometheus.io/scrape"):              s("true"),
		},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: s("apps/v1"), Kind: s("ReplicaSet"), Name: rsName, UID: ownerUID,
			Controller: ptr(true), BlockOwnerDeletion: ptr(true),
		}},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: s("kube-controller-manager"), Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: s("v1"),
				Time: ptr(metav1.NewTime(created)), FieldsType: s("FieldsV1"),
				FieldsV1: metav1.NewFieldsV1(fmt.Sprintf(controllerFields, ownerUID))},
			{Manager: s("kube-scheduler"), Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: s("v1"),
				Time: ptr(metav1.NewTime(scheduled)), FieldsType: s("FieldsV1"), Subresource: s("status"),
				FieldsV1: metav1.NewFieldsV1(schedulerFields)},
			{Manager: s("kubelet"), Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: s("v1"),
				Time: ptr(metav1.NewTime(changed)), FieldsType: s("FieldsV1"), Subresource: s("status"),
				FieldsV1: metav1.NewFieldsV1(fmt.Sprintf(kubeletFields, podIP))},
		},
	}
	p.Spec = corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "kube-api-access-" + suffix(r, 5), VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr(int32(420)),
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: s("token")}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: s("kube-root-ca.crt")},
						Items: []corev1.KeyToPath{{Key: s("ca.crt"), Path: s("ca.crt")}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: s("namespace"),
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: s("v1"), FieldPath: s("metadata.namespace")}}}}},
				}}}},
		},
		Containers: []corev1.Container{
			g.container(r, s("app"), s(name), image, 8080, true),
		},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr(int64(30)),
		DNSPolicy:                     corev1.DNSClusterFirst,
		ServiceAccountName:            s("default"),
		DeprecatedServiceAccount:      s("default"),
		NodeName:                      node,
		SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), FSGroup: ptr(int64(2000))},
		SchedulerName:                 s("default-scheduler"),
		Tolerations: []corev1.Toleration{
			{Key: s("node.kubernetes.io/not-ready"), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			{Key: s("node.kubernetes.io/unreachable"), Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
		},
		Priority:           ptr(int32(0)),
		EnableServiceLinks: ptr(true),
		PreemptionPolicy:   ptr(corev1.PreemptLowerPriority),
	}
	cond := func(t corev1.PodConditionType, at time.Time) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodConditionType(s(string(t))), Status: corev1.ConditionStatus(s("True")),
			LastTransitionTime: metav1.NewTime(at)}
	}
	p.Status = corev1.PodStatus{
		Phase: corev1.PodPhase(s("Running")),
		Conditions: []corev1.PodCondition{
			cond(corev1.PodReadyToStartContainers, started),
			cond(corev1.PodInitialized, scheduled),
			cond(corev1.PodReady, changed),
			cond(corev1.ContainersReady, changed),
			cond(corev1.PodScheduled, scheduled),
		},
		HostIP:    hostIP,
		PodIP:     podIP,
		PodIPs:    []corev1.PodIP{{IP: s(podIP)}},
		StartTime: ptr(metav1.NewTime(scheduled)),
		QOSClass:  corev1.PodQOSClass(s("Burstable")),
		ContainerStatuses: []corev1.ContainerStatus{
			g.containerStatus(r, "app", image, changed, version),
		},
	}
}

func (g *Generator) container(r *rand.Rand, name, podName, image string, port int32, probes bool) corev1.Container {
	c := corev1.Container{
		Name:  name,
		Image: image,
		Ports: []corev1.ContainerPort{{Name: s("http"), ContainerPort: port, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			{Name: s("LOG_LEVEL"), Value: s("info")},
			{Name: s("GOMAXPROCS"), Value: strconv.Itoa(1 + r.IntN(4))},
			{Name: s("POD_NAME"), Value: podName},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q(strconv.Itoa(50*(1+r.IntN(8))) + "m"), corev1.ResourceMemory: q(strconv.Itoa(64*(1+r.IntN(8))) + "Mi")},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: s("kube-api-access"), ReadOnly: true, MountPath: s("/var/run/secrets/kubernetes.io/serviceaccount")},
		},
		TerminationMessagePath:   s("/dev/termination-log"),
		TerminationMessagePolicy: corev1.TerminationMessagePolicy(s("File")),
		ImagePullPolicy:          corev1.PullPolicy(s("IfNotPresent")),
	}
	if probes {
		probe := func(path string, delay int32) *corev1.Probe {
			return &corev1.Probe{
				ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: s(path), Port: intstr.FromString(s("http")), Scheme: corev1.URISchemeHTTP}},
				InitialDelaySeconds: delay, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
			}
		}
		c.ReadinessProbe = probe("/readyz", 5)
	}
	return c
}

func (g *Generator) containerStatus(r *rand.Rand, name, image string, since time.Time, restarts int) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:         s(name),
		State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(since)}},
		Ready:        true,
		RestartCount: int32(restarts),
		Image:        s(image),
		ImageID:      s(image) + "@sha256:" + hex(r, 64),
		ContainerID:  "containerd://" + hex(r, 64),
		Started:      ptr(true),
	}
}

func q(v string) resource.Quantity { return resource.MustParse(v) }

func ptr[T any](v T) *T { return &v }

// The managedFields of a pod made by a ReplicaSet, scheduled and started:
// what kube-apiserver records for the three writers (abridged only where
// two containers would repeat the same keys).
const controllerFields = `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{},"f:app.kubernetes.io/version":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"%s\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"GOMAXPROCS\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{".":{},"f:requests":{}},"f:volumeMounts":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`

const schedulerFields = `{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}}}}`

const kubeletFields = `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"%s\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`

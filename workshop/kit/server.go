package kit

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/kube"
)

// StartServer starts the embedded API server on a free loopback port and
// stops it when t ends. opts may be omitted; its first element is used.
func StartServer(t testing.TB, opts ...apiserver.Options) *apiserver.Server {
	t.Helper()
	var o apiserver.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	srv, err := apiserver.Start(o)
	if err != nil {
		t.Fatalf("kit: cannot start the embedded API server: %v", err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// PodOption changes a pod made by [Pod].
type PodOption func(*corev1.Pod)

// OnNode sets spec.nodeName.
func OnNode(node string) PodOption { return func(p *corev1.Pod) { p.Spec.NodeName = node } }

// WithLabels sets labels from key, value pairs: WithLabels("app", "web").
func WithLabels(kv ...string) PodOption {
	return func(p *corev1.Pod) {
		if len(kv)%2 != 0 {
			panic("kit.WithLabels: odd number of arguments")
		}
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

// WithRV sets metadata.resourceVersion, for pods that go straight into a
// queue or store without a server.
func WithRV(rv string) PodOption { return func(p *corev1.Pod) { p.ResourceVersion = rv } }

// MountingConfigMaps adds one volume per name, each from the ConfigMap of
// that name.
func MountingConfigMaps(names ...string) PodOption {
	return func(p *corev1.Pod) {
		for i, n := range names {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{
				Name:         fmt.Sprintf("v%d", i),
				VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: n}}},
			})
		}
	}
}

// Pod makes a pod in namespace (default "default" when empty) called name.
func Pod(namespace, name string, opts ...PodOption) *corev1.Pod {
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// CreatePods creates n pods called prefix-0 … prefix-(n-1) in namespace
// "default" on srv and returns them as stored.
func CreatePods(t testing.TB, srv *apiserver.Server, prefix string, n int, opts ...PodOption) []*corev1.Pod {
	t.Helper()
	out := make([]*corev1.Pod, 0, n)
	for i := range n {
		obj, err := srv.Create(Pod("", fmt.Sprintf("%s-%d", prefix, i), opts...))
		if err != nil {
			t.Fatalf("kit: create pod %s-%d: %v", prefix, i, err)
		}
		out = append(out, obj.(*corev1.Pod))
	}
	return out
}

// ListWatch returns a ListerWatcher for res (all namespaces) over HTTP, the
// way an informer talks to a real API server.
func ListWatch(t testing.TB, srv *apiserver.Server, res apiserver.Resource) reflector.ListerWatcher {
	t.Helper()
	client, err := kube.RESTClientFor(srv.Config(), res.GVR.GroupVersion())
	if err != nil {
		t.Fatalf("kit: REST client: %v", err)
	}
	return reflector.NewListWatchFromClient(client, res.GVR.Resource, metav1.NamespaceAll, fields.Everything())
}

// InProcessListWatch returns a ListerWatcher for res that calls the server's
// in-process List and Watch. Use it inside a testing/synctest bubble: its
// waits are durably blocking, so the bubble's fake clock can jump over
// backoffs and the reflector's one-second "very short watch" rule.
func InProcessListWatch(srv *apiserver.Server, res apiserver.Resource) reflector.ListerWatcher {
	return srv.ListerWatcher(res, metav1.NamespaceAll)
}

// CountRequests counts the requests of verb (list, watch, ...) for resource
// ("pods", "configmaps"; "" for any). "watch" counts streams too; see
// CountStateFetches.
func CountRequests(reqs []apiserver.Request, verb, resource string) int {
	n := 0
	for _, r := range reqs {
		if r.Verb == verb && (resource == "" || r.Resource == resource) {
			n++
		}
	}
	return n
}

// CountStateFetches counts the requests for resource ("" for any) that
// fetch the whole state: streams (a WATCH with sendInitialEvents=true, how
// a reflector fetches it since client-go v0.35) and LISTs (where the
// server cannot stream, or the reflector does not; each page counts). A
// reflector that counts more than one has relisted.
func CountStateFetches(reqs []apiserver.Request, resource string) int {
	n := 0
	for _, r := range reqs {
		if (r.IsWatchList() || r.Verb == "list") && (resource == "" || r.Resource == resource) {
			n++
		}
	}
	return n
}

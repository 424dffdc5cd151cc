package scalegen

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TemplatePod is one pod of a fixed template: labels, annotations, a
// ReplicaSet owner, two containers, status, and three managedFields
// entries (the controller manager's create, the kubelet's status, a
// kubectl patch of its annotations), written out as a real cluster records
// them: 10.9 KiB in memory, 6.1 KiB as JSON (docs/scale.md, which the
// scale lesson measures). variant changes its content as an update
// would (images, a label, an annotation). Where [Generator] makes a
// population whose every pod differs, this is the one pod a lesson or a
// test changes by hand: trace-demo's scale lesson serves it, and chapter
// 5's relist tests list and watch it. Each call builds a new pod; its
// FieldsV1 bytes and the strings built from name and variant are its own,
// the constant strings are shared, as a decoder's would not be.
func TemplatePod(ns, name string, variant int) *corev1.Pod {
	v := strconv.Itoa(variant)
	started := metav1.Unix(1_700_000_000, 0)
	fields := func(manager string) *metav1.FieldsV1 {
		return metav1.NewFieldsV1(templateManagedFields[manager])
	}
	ctr := func(c string) corev1.Container {
		return corev1.Container{
			Name:  c,
			Image: "registry.example.com/team/" + c + ":v1." + v,
			Env: []corev1.EnvVar{
				{Name: "POD_NAME", Value: name}, {Name: "LOG_LEVEL", Value: "info"},
				{Name: "UPSTREAM_URL", Value: "http://upstream.default.svc.cluster.local:8080/" + name},
			},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: templateQuantities[0], corev1.ResourceMemory: templateQuantities[1]},
				Requests: corev1.ResourceList{corev1.ResourceCPU: templateQuantities[2], corev1.ResourceMemory: templateQuantities[3]},
			},
			VolumeMounts:             []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + c}},
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy:          corev1.PullIfNotPresent,
		}
	}
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name,
			Labels:      map[string]string{"app": "web", "pod-template-hash": "7d9f8c6b5", "variant": v},
			Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z", "example.com/owner": "team-" + v},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8c6b5",
				UID: "0b5b5f2e-4c1e-4b7a-9d1e-111111111111", Controller: &yes, BlockOwnerDeletion: &yes}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &started,
					FieldsType: "FieldsV1", FieldsV1: fields("kcm")},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &started,
					FieldsType: "FieldsV1", FieldsV1: fields("kubelet"), Subresource: "status"},
				{Manager: "kubectl-patch", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &started,
					FieldsType: "FieldsV1", FieldsV1: fields("kubectl")},
			},
		},
		Spec: corev1.PodSpec{
			Containers:         []corev1.Container{ctr("app"), ctr("sidecar")},
			Volumes:            []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}},
			NodeName:           "node-" + strconv.Itoa(len(name)%7),
			ServiceAccountName: "web",
			RestartPolicy:      corev1.RestartPolicyAlways,
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started}},
			HostIP:     "10.0.0.1", PodIP: "10.1.2.3", StartTime: &started,
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", Ready: true, Image: "registry.example.com/team/app:v1." + v, ImageID: "registry.example.com/team/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", ContainerID: "containerd://" + name + "-app"},
				{Name: "sidecar", Ready: true, Image: "registry.example.com/team/sidecar:v1." + v, ImageID: "registry.example.com/team/sidecar@sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210", ContainerID: "containerd://" + name + "-sidecar"},
			},
		},
	}
}

// templateQuantities are TemplatePod's resource values, parsed once
// (parsing them for every pod was most of a test's time).
var templateQuantities = []resource.Quantity{
	resource.MustParse("500m"), resource.MustParse("256Mi"), resource.MustParse("100m"), resource.MustParse("128Mi"),
}

// templateManagedFields is each field manager's FieldsV1, as a real cluster
// records them for TemplatePod's pod: the controller manager owns what
// it wrote when it created the pod (metadata, every field of the spec), the
// kubelet the status, kubectl the annotation it set; built once, copied by
// the server into every object it stores, and by every client it serves.
var templateManagedFields = func() map[string]string {
	container := func(name string) string {
		return `"k:{\"name\":\"` + name + `\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},` +
			`"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"UPSTREAM_URL\"}":{".":{},"f:name":{},"f:value":{}}},` +
			`"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},` +
			`"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},` +
			`"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/etc/` + name + `\"}":{".":{},"f:mountPath":{},"f:name":{}}}}`
	}
	status := func(name string) string {
		return `"k:{\"name\":\"` + name + `\"}":{".":{},"f:containerID":{},"f:image":{},"f:imageID":{},"f:lastState":{},"f:name":{},"f:ready":{},"f:restartCount":{},"f:started":{},"f:state":{".":{},"f:running":{".":{},"f:startedAt":{}}}}`
	}
	condition := func(typ string) string {
		return `"k:{\"type\":\"` + typ + `\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}`
	}
	return map[string]string{
		"kcm": `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:variant":{}},` +
			`"f:ownerReferences":{".":{},"k:{\"uid\":\"0b5b5f2e-4c1e-4b7a-9d1e-111111111111\"}":{}}},` +
			`"f:spec":{"f:containers":{` + container("app") + `,` + container("sidecar") + `},` +
			`"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},` +
			`"f:serviceAccount":{},"f:serviceAccountName":{},"f:terminationGracePeriodSeconds":{},` +
			`"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},"f:configMap":{".":{},"f:defaultMode":{},"f:name":{}},"f:name":{}}}}}`,
		"kubelet": `{"f:status":{"f:conditions":{` + condition("ContainersReady") + `,` + condition("Initialized") + `,` +
			condition("PodReadyToStartContainers") + `,` + condition("PodScheduled") + `,` + condition("Ready") + `},` +
			`"f:containerStatuses":{` + status("app") + `,` + status("sidecar") + `},` +
			`"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.1.2.3\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`,
		"kubectl": `{"f:metadata":{"f:annotations":{".":{},"f:example.com/owner":{},"f:kubectl.kubernetes.io/restartedAt":{}}}}`,
	}
}()

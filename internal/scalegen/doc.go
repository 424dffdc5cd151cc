// Package scalegen makes the workload of the scale benchmark (test/scale):
// realistic pods, as many as a large cluster holds, and a ListerWatcher that
// serves them the way kube-apiserver does. It is ours; client-go has no
// counterpart.
//
// A [Generator] builds pod i of a seeded population: metadata with labels,
// annotations, a ReplicaSet owner reference and the three managedFields
// entries a running pod carries (kube-controller-manager, kube-scheduler,
// kubelet, with FieldsV1 JSON as the server writes it), a spec with two
// containers (image, ports, env, resources, volume mounts, probes) and a
// status with conditions, container statuses and IPs. The same seed gives
// the same pods. Every call builds a new pod whose strings, maps, slices and
// byte slices share no memory with any earlier call, as a decoder's output
// does: a cache that holds 150,000 of them holds what an informer fed by a
// real server holds (about 9 KB a pod, one container, the managedFields
// about a quarter of it; TestAPodWeighsWhatADecodedPodWeighs holds the
// generator to a JSON round trip of its own pods). Pods are built
// from the seed on demand, never kept: 150,000 pods kept as JSON bytes would
// cost the benchmark's process half a gigabyte of its own.
//
// A [Source] serves N of them as one resource's ListerWatcher, to client-go's
// informer and to ours alike, on either first-request path: a watch-list
// stream (sendInitialEvents: ADDED events, then the initial-events-end
// bookmark) or, when built with [PagedList], a LIST that honours limit and
// continue, for which it tells the reflector it cannot stream. [Source.Expire]
// ends every open watch with a 410 Expired ERROR event, which makes a
// reflector relist; [Source.Update] records a change of one pod that every
// watch then delivers as MODIFIED, generated as it is sent.
//
// [TemplatePod] is a single pod of a fixed template, which the scale lesson
// of trace-demo and chapter 5's relist tests change by hand.
package scalegen

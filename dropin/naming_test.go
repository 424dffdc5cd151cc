package dropin_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/informer-anatomy/informer-anatomy/dropin"
	"github.com/informer-anatomy/informer-anatomy/internal/spantest"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

func unstructuredOf(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// TestUnstructuredInformersAreNamedByTheirGVK: two informers of
// *unstructured.Unstructured, built as controller-runtime's cache builds
// them for custom resources (NewSharedIndexInformer, no Identifier, no
// description, an example object with apiVersion and kind), get the GVK
// as their informer.name, as client-go's reflector describes them
// (TypeDescription), not the Go type they share. Before, both were
// "*unstructured.Unstructured".
func TestUnstructuredInformersAreNamedByTheirGVK(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	gadgets := schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "gadgets"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets: "WidgetList", gadgets: "GadgetList"},
		unstructuredOf("example.com/v1", "Widget", "ns", "w"), unstructuredOf("example.com/v2", "Gadget", "ns", "g"))
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for _, c := range []struct {
			gvr              schema.GroupVersionResource
			apiVersion, kind string
		}{{widgets, "example.com/v1", "Widget"}, {gadgets, "example.com/v2", "Gadget"}} {
			example := unstructuredOf(c.apiVersion, c.kind, "", "")
			lw := dropin.NewListWatch(dropin.FactoryScope{}, client, client.Resource(c.gvr))
			inf := dropin.NewSharedIndexInformer(lw, example, 0, cache.Indexers{})
			require.NoError(t, inf.(*dropin.Informer).SetTracerProvider(tp))
			go inf.RunWithContext(ctx)
			upstream := cache.NewReflectorWithOptions(lw, example, cache.NewStore(cache.MetaNamespaceKeyFunc), cache.ReflectorOptions{})
			require.Equal(t, c.gvr.GroupVersion().WithKind(c.kind).String(), upstream.TypeDescription(), "client-go's description")
		}
		synctest.Wait()
		cancel()
		synctest.Wait()

		names := map[string]string{} // object key -> informer.name of its HandleDeltas
		for _, s := range rec.Ended() {
			if s.Name() == "HandleDeltas" {
				names[spantest.Attr(s, tracing.KeyObjectKey).AsString()] = spantest.Attr(s, tracing.KeyInformerName).AsString()
			}
		}
		require.Equal(t, map[string]string{"ns/w": "example.com/v1, Kind=Widget", "ns/g": "example.com/v2, Kind=Gadget"}, names)
	})
}

// TestInformerNamesBesideTheGVK: Identifier's resource still wins, a
// description given is the name, a typed object is named by its Go type,
// an Unstructured without apiVersion and kind by its Go type too (as
// client-go's reflector describes it), and a metadata-only informer's
// PartialObjectMetadata by its GVK (ours).
func TestInformerNamesBesideTheGVK(t *testing.T) {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	pods := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.Pod{pod}}
	podGVK := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	metaOf := func() *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{ObjectMeta: pod.ObjectMeta}
		m.SetGroupVersionKind(podGVK)
		return m
	}
	metas := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []metav1.PartialObjectMetadata{*metaOf()}}
	for _, c := range []struct {
		example runtime.Object
		list    runtime.Object
		options cache.SharedIndexInformerOptions
		want    string
	}{
		{&corev1.Pod{}, pods, cache.SharedIndexInformerOptions{}, "*v1.Pod"},
		{&corev1.Pod{}, pods, cache.SharedIndexInformerOptions{ObjectDescription: "my pods"}, "my pods"},
		{&corev1.Pod{}, pods, cache.SharedIndexInformerOptions{
			Identifier: identifier(t, schema.GroupVersionResource{Version: "v1", Resource: "pods"})}, "pods"},
		{&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}, metas, cache.SharedIndexInformerOptions{}, "/v1, Kind=Pod (metadata)"},
	} {
		synctest.Test(t, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
				ListWithContextFunc:  func(context.Context, metav1.ListOptions) (runtime.Object, error) { return c.list.DeepCopyObject(), nil },
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
			}, unsupportedWatchList{})
			inf := dropin.NewSharedIndexInformerWithOptions(lw, c.example, c.options)
			require.NoError(t, inf.(*dropin.Informer).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
			ctx, cancel := context.WithCancel(context.Background())
			go inf.RunWithContext(ctx)
			synctest.Wait()
			cancel()
			synctest.Wait()
			var got []string
			for _, s := range rec.Ended() {
				if s.Name() == "HandleDeltas" {
					got = append(got, spantest.Attr(s, tracing.KeyInformerName).AsString())
				}
			}
			require.Equal(t, []string{c.want}, got)
		})
	}
	upstream := cache.NewReflectorWithOptions(&cache.ListWatch{}, &unstructured.Unstructured{}, cache.NewStore(cache.MetaNamespaceKeyFunc), cache.ReflectorOptions{})
	require.Equal(t, "*unstructured.Unstructured", upstream.TypeDescription(), "client-go: no GVK, the Go type")
}

type unsupportedWatchList struct{}

func (unsupportedWatchList) IsWatchListSemanticsUnSupported() bool { return true }

func identifier(t *testing.T, gvr schema.GroupVersionResource) cache.InformerNameAndResource {
	name, err := cache.NewInformerName(t.Name())
	require.NoError(t, err)
	t.Cleanup(name.Release)
	return name.WithResource(gvr)
}

// TestNamedHandler: a handler given through NamedHandler has that name in
// its spans (informer.listener, with its place among the informer's
// handlers), another keeps client-go's naming, and the named one still
// gets every call, tombstones converted as for any handler.
func TestNamedHandler(t *testing.T) {
	s := newServer(t, "a")
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		inf := dropin.NewSharedIndexInformer(inProcessLW(s.srv), &corev1.Pod{}, 0, nil)
		require.NoError(t, inf.(*dropin.Informer).SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
		var added []string
		_, err := inf.AddEventHandler(dropin.NamedHandler("pods-to-queue", cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			added = append(added, obj.(*corev1.Pod).Name)
		}}))
		require.NoError(t, err)
		_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		go inf.RunWithContext(ctx)
		synctest.Wait()
		cancel()
		synctest.Wait()
		require.Equal(t, []string{"a"}, added)
		var listeners []string
		for _, s := range rec.Ended() {
			if s.Name() == "OnAdd" {
				listeners = append(listeners, spantest.Attr(s, tracing.KeyListener).AsString())
			}
		}
		require.ElementsMatch(t, []string{"pods-to-queue#0",
			"github.com/informer-anatomy/informer-anatomy/dropin_test.TestNamedHandler.func1#1"}, listeners)
	})
}

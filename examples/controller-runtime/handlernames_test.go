package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
	"github.com/informer-anatomy/informer-anatomy/internal/tracing"
)

// podToConfigMap is the Watches handler's map function of
// TestControllerRuntimeHandlersAreToldApart.
func podToConfigMap(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: "app"}}}
}

// TestControllerRuntimeHandlersAreToldApart: a controller-runtime manager
// whose cache is built on dropin (ManagerOptions), over the embedded API
// server, with a controller of For(ConfigMap), Owns(Secret) and
// Watches(Pod, EnqueueRequestsFromMapFunc), Watches(Deployment,
// handler.Funcs). controller-runtime adds the same wrapper type
// (pkg/internal/source.EventHandler) to each informer; dropin names each
// listener by the handler.EventHandler it wraps, so the four OnAdd spans
// say which watch they are. Before, all four were
// "sigs.k8s.io/controller-runtime/pkg/internal/source.EventHandler[…]#0".
func TestControllerRuntimeHandlersAreToldApart(t *testing.T) {
	srv, err := apiserver.Start(apiserver.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-secret"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-pod"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-deployment"}},
	} {
		_, err := srv.Create(obj)
		require.NoError(t, err)
	}
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	opts := ManagerOptions("ns")
	// The embedded server serves no discovery: map the three kinds here.
	opts.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
		m := meta.NewDefaultRESTMapper(nil)
		for _, kind := range []string{"ConfigMap", "Secret", "Pod"} {
			m.Add(corev1.SchemeGroupVersion.WithKind(kind), meta.RESTScopeNamespace)
		}
		m.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
		return m, nil
	}
	mgr, err := ctrl.NewManager(srv.Config(), opts)
	require.NoError(t, err)
	err = ctrl.NewControllerManagedBy(mgr).Named("told-apart").
		// The example's queue, as main's controller has it.
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true), NewQueue: NewQueue}).
		For(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToConfigMap)).
		Watches(&appsv1.Deployment{}, handler.Funcs{
			CreateFunc: func(context.Context, event.CreateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {},
			DeleteFunc: func(context.Context, event.DeleteEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {},
		}).
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	listeners := func() map[string]string { // object key -> informer.listener of its OnAdd
		got := map[string]string{}
		for _, s := range rec.Ended() {
			if s.Name() != "OnAdd" {
				continue
			}
			var key, listener string
			for _, a := range s.Attributes() {
				switch a.Key {
				case tracing.KeyObjectKey:
					key = a.Value.AsString()
				case tracing.KeyListener:
					listener = a.Value.AsString()
				}
			}
			got[key] = listener
		}
		return got
	}
	// Waiting, not timing: the handlers run once the controller has
	// started its sources.
	require.Eventually(t, func() bool { return len(listeners()) == 4 }, time.Minute, 10*time.Millisecond)
	got := listeners()
	const handlerPkg = "sigs.k8s.io/controller-runtime/pkg/handler."
	require.Equal(t, map[string]string{
		"ns/app":            handlerPkg + "TypedEnqueueRequestForObject#0",
		"ns/app-secret":     handlerPkg + "WithLowPriorityWhenUnchanged#0", // what EnqueueRequestForOwner returns
		"ns/app-pod":        handlerPkg + "enqueueRequestsFromMapFunc(github.com/informer-anatomy/informer-anatomy/examples/controller-runtime.podToConfigMap)#0",
		"ns/app-deployment": handlerPkg + "TypedFuncs(github.com/informer-anatomy/informer-anatomy/examples/controller-runtime.TestControllerRuntimeHandlersAreToldApart)#0",
	}, got)
	for _, l := range got {
		require.False(t, strings.Contains(l, "internal/source.EventHandler"), l)
	}
}

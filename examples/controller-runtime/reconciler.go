package main

import (
	"context"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// WatchLabel selects the ConfigMaps reconciled.
const WatchLabel = "example.informer-anatomy.io/watch"

// StatusSuffix names a watched ConfigMap's status ConfigMap.
const StatusSuffix = "-status"

// Reconciler keeps "<name>-status" beside each watched ConfigMap.
type Reconciler struct {
	client.Client
	// Reconciled, if set, is told of every reconcile (the e2e test).
	Reconciled func(req reconcile.Request, err error)
}

// Setup registers the controller on mgr, its queue made by NewQueue.
func Setup(mgr ctrl.Manager, reconciled func(reconcile.Request, error)) (*Reconciler, error) {
	r := &Reconciler{Client: mgr.GetClient(), Reconciled: reconciled}
	watched := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[WatchLabel] == "true" })
	return r, ctrl.NewControllerManagedBy(mgr).
		Named("configmap-status").
		For(&corev1.ConfigMap{}, builder.WithPredicates(watched)).
		WithOptions(controller.Options{NewQueue: NewQueue}).
		Complete(r)
}

// Reconcile makes the status ConfigMap match the watched one, or removes
// it when the watched one is gone.
//
// Its ctx is first given the key's workqueue.process span
// (dropin.ReconcileContext: controller-runtime calls the queue's Get,
// Reconcile and Done on one worker goroutine), so spans started from it go
// on the object's trace, and the status it writes is stamped with it
// (dropin.StampTraceparent).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	ctx = dropin.ReconcileContext(ctx)
	if r.Reconciled != nil {
		defer func() { r.Reconciled(req, err) }()
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		st := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name + StatusSuffix}}
		return reconcile.Result{}, client.IgnoreNotFound(r.Delete(ctx, st))
	}
	st := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name + StatusSuffix}}
	_, err = ctrl.CreateOrUpdate(ctx, r.Client, st, func() error {
		data := map[string]string{"observedResourceVersion": cm.ResourceVersion, "keys": strconv.Itoa(len(cm.Data))}
		if st.ResourceVersion == "" || !maps.Equal(st.Data, data) {
			// A create, or a change: stamped with this reconcile's span.
			// Left alone when nothing else changes, so CreateOrUpdate
			// still skips a write that would change nothing.
			dropin.StampTraceparent(ctx, st)
		}
		st.Data = data
		return ctrl.SetControllerReference(&cm, st, r.Scheme())
	})
	return reconcile.Result{}, err
}

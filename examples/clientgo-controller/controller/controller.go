// Package controller is a small controller written the way client-go's
// sample-controller is: event handlers that put keys on a rate-limited
// workqueue, workers that take them, and a sync handler that reads the
// object from a lister and makes the world match it.
//
// What it does: for every ConfigMap labelled
// example.informer-anatomy.io/watch=true it keeps a ConfigMap named
// "<name>-status" beside it, recording which resourceVersion it last saw
// and how many keys it holds; when the watched ConfigMap goes, so does its
// status. Nothing in it knows about this project except one line:
// [UseDropinInformer], which makes the factory hand out our informer, and
// the queue's constructor, dropin.NewTracedRateLimitingQueueWithConfig in
// place of client-go's workqueue.NewTypedRateLimitingQueueWithConfig.
package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// WatchLabel selects the ConfigMaps this controller reconciles.
const WatchLabel = "example.informer-anatomy.io/watch"

// StatusSuffix names a watched ConfigMap's status ConfigMap.
const StatusSuffix = "-status"

// Controller reconciles watched ConfigMaps into status ConfigMaps.
type Controller struct {
	client  kubernetes.Interface
	lister  corelisters.ConfigMapLister
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	handled cache.ResourceEventHandlerRegistration

	// Reconciled, if set, is called after each sync with its key and
	// error (tests and the e2e watch it).
	Reconciled func(key string, err error)
}

// New wires a controller to the factory's ConfigMap informer. The queue is
// client-go's rate-limited workqueue, built traced by
// dropin.NewTracedRateLimitingQueueWithConfig (client-go's constructor's
// arguments, one word changed), so the trace of each ConfigMap goes on
// from the handler to the reconcile; client-go's queue inside reports its
// workqueue_* metrics under its name through client-go's provider
// (workqueue.SetProvider's, which component-base's
// metrics/prometheus/workqueue installs when imported), as untraced.
func New(client kubernetes.Interface, configMaps coreinformers.ConfigMapInformer) (*Controller, error) {
	c := &Controller{
		client: client,
		lister: configMaps.Lister(),
		synced: configMaps.Informer().HasSynced,
		queue: dropin.NewTracedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "configmap-status"}),
	}
	reg, err := configMaps.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: watched,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    c.enqueue,
			UpdateFunc: func(_, newObj any) { c.enqueue(newObj) },
			DeleteFunc: c.enqueue,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the ConfigMap handler: %w", err)
	}
	c.handled = reg
	return c, nil
}

// watched: a labelled ConfigMap, or the tombstone of one.
func watched(obj any) bool {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	return ok && cm.Labels[WatchLabel] == "true"
}

// enqueue puts the object's key on the queue. A tombstone (a delete the
// informer learned of by relisting) has its key too.
func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// Run waits for the cache and this controller's handler to have seen the
// initial state, starts workers, and blocks until ctx is done and the
// workers have finished the keys they hold (sample-controller leaves them
// running; waiting means that when Run returns, no reconcile is half done
// and every reconcile's trace has ended).
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	if !cache.WaitFor(ctx, "", c.handled.HasSyncedChecker()) {
		return errors.New("the ConfigMap cache did not sync before the context ended")
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.runWorker, time.Second) })
	}
	<-ctx.Done()
	c.queue.ShutDown() // a worker waiting in Get returns
	wg.Wait()
	return nil
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextItem(ctx) {
	}
}

func (c *Controller) processNextItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	// The reconcile's ctx carries the key's workqueue.process span: spans
	// started from it in sync (an HTTP client's, with the REST config's
	// transport wrapped by otelhttp, see main.go) go on the object's trace,
	// and the status written is stamped with it.
	err := c.sync(dropin.ReconcileContext(ctx), key)
	if c.Reconciled != nil {
		c.Reconciled(key, err)
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "sync failed; will retry", "key", key)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync makes the status ConfigMap of key match the watched one.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // a malformed key will never sync; dropping it is all we can do
	}
	cm, err := c.lister.ConfigMaps(ns).Get(name)
	if apierrors.IsNotFound(err) {
		err = c.client.CoreV1().ConfigMaps(ns).Delete(ctx, name+StatusSuffix, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	want := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name + StatusSuffix,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}},
		},
		Data: map[string]string{"observedResourceVersion": cm.ResourceVersion, "keys": strconv.Itoa(len(cm.Data))},
	}
	got, err := c.client.CoreV1().ConfigMaps(ns).Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Stamped with this reconcile's span (tracing.k8s.io/traceparent):
		// a controller watching status ConfigMaps on our informer links
		// its trace of this write to this reconcile.
		dropin.StampTraceparent(ctx, want)
		_, err = c.client.CoreV1().ConfigMaps(ns).Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if apiequality.Semantic.DeepEqual(got.Data, want.Data) && apiequality.Semantic.DeepEqual(got.OwnerReferences, want.OwnerReferences) {
		// Nothing to change. Writing anyway would now change the object
		// (a new stamp each time) and wake every watcher for nothing.
		return nil
	}
	got = got.DeepCopy()
	got.Data = want.Data
	got.OwnerReferences = want.OwnerReferences
	dropin.StampTraceparent(ctx, got)
	_, err = c.client.CoreV1().ConfigMaps(ns).Update(ctx, got, metav1.UpdateOptions{})
	return err
}

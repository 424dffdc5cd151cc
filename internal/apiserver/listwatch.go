package apiserver

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ListerWatcher lists and watches one resource in one namespace of a
// [Server] in process, through [Server.List] and [Server.Watch], never over
// HTTP. Build it with [Server.ListerWatcher].
//
// Ours: client-go has no in-process server, so nothing upstream to mirror.
// Its method set is that of client-go's cache.ListerWatcherWithContext
// (k8s.io/client-go/tools/cache, listwatch.go) and of the plain
// cache.ListerWatcher, and so of chapter 3's reflector.ListerWatcher and
// ListerWatcherWithContext, which mirror them: one value serves our
// reflector and client-go's side by side. It has no
// IsWatchListSemanticsUnSupported, so a reflector built on it streams its
// initial state when the server allows it; wrap it to opt out.
//
// Why in process: a reflector whose LIST or WATCH waits on a socket is never
// durably blocked, so a testing/synctest bubble's clock could not advance;
// one that waits on this type's channels is. Without one shared type every
// test bed wrote these four methods again as a ListWatch of two closures.
type ListerWatcher struct {
	srv       *Server
	res       Resource
	namespace string
}

// ListerWatcher returns a [ListerWatcher] for res in namespace
// (metav1.NamespaceAll, "", for every namespace).
//
// Ours: see [ListerWatcher].
func (s *Server) ListerWatcher(res Resource, namespace string) *ListerWatcher {
	return &ListerWatcher{srv: s, res: res, namespace: namespace}
}

// List lists with a background context; see [ListerWatcher.ListWithContext].
//
// Ours: the method of client-go's cache.Lister (listwatch.go).
func (lw *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// ListWithContext serves one LIST (or one page of it) through
// [Server.List]: the resource's typed list, e.g. *corev1.PodList.
//
// Ours: the method of client-go's cache.ListerWithContext (listwatch.go).
func (lw *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return lw.srv.List(ctx, lw.res, lw.namespace, opts)
}

// Watch opens a WATCH with a background context; see
// [ListerWatcher.WatchWithContext].
//
// Ours: the method of client-go's cache.Watcher (listwatch.go).
func (lw *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// WatchWithContext opens a WATCH through [Server.Watch]; the watch ends when
// ctx is done, when it is stopped, or when the server ends it.
//
// Ours: the method of client-go's cache.WatcherWithContext (listwatch.go).
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return lw.srv.Watch(ctx, lw.res, lw.namespace, opts)
}

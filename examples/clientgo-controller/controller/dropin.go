package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// UseDropinInformer makes factory hand out our informer for ConfigMaps
// within scope, the scope the factory was made with (scope.Options()):
// InformerFor's first caller decides how an informer of a type is built,
// and every later caller, factory.Core().V1().ConfigMaps() included, gets
// that one. Call it right after making the factory, before anything asks
// for ConfigMaps.
//
// dropin.NewInformerFunc builds what client-go's generated informer builds:
// typed List and Watch calls within the scope's namespace, with its
// list-options tweak, marked by ToListWatcherWithWatchListSemantics so that
// a client that cannot stream the initial state (the fake clientset) is
// listed instead, by our reflector as by client-go's.
func UseDropinInformer(factory informers.SharedInformerFactory, scope dropin.FactoryScope) {
	factory.InformerFor(&corev1.ConfigMap{}, dropin.NewInformerFunc(scope, &corev1.ConfigMap{},
		func(c kubernetes.Interface, namespace string) dropin.ListWatchClient[*corev1.ConfigMapList] {
			return c.CoreV1().ConfigMaps(namespace)
		}))
}

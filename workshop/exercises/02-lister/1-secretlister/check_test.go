//go:build workshop

package secretlister

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"

	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func secret(ns, name, app string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}}}
}

func TestSecretLister(t *testing.T) {
	kit.Returns(t, "your lister (NewSecretLister, List, Secrets, Get)", func() { checkSecretLister(t) })
}

func checkSecretLister(t *testing.T) {
	idx := store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{store.NamespaceIndex: store.MetaNamespaceIndexFunc})
	for _, s := range []*corev1.Secret{secret("a", "tls", "web"), secret("a", "db-pass", "db"), secret("b", "tls", "web")} {
		_ = idx.Add(s)
	}
	l := NewSecretLister(idx)
	if l == nil {
		t.Fatal("NewSecretLister returned nil")
	}
	all, err := l.List(labels.Everything())
	if err != nil || len(all) != 3 {
		t.Errorf("List(Everything): want 3 secrets, got %d (err %v)", len(all), err)
	}
	if l.Secrets("a") == nil {
		t.Fatal(`Secrets("a") returned nil`)
	}
	web, err := l.Secrets("a").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	if err != nil || len(web) != 1 || web[0].Name != "tls" || web[0].Namespace != "a" {
		t.Errorf(`Secrets("a").List(app=web): want [a/tls], got %d secrets (err %v)`, len(web), err)
	}
	got, err := l.Secrets("b").Get("tls")
	if err != nil || got == nil || got.Namespace != "b" {
		t.Errorf(`Secrets("b").Get("tls"): want b/tls, got %v (err %v)`, got, err)
	}
	_, err = l.Secrets("b").Get("x")
	if !apierrors.IsNotFound(err) {
		t.Errorf(`Get of a missing secret: want a NotFound API error (apierrors.IsNotFound), got %v`, err)
	} else if err.Error() != `secret "x" not found` {
		t.Errorf(`NotFound message: want %q, got %q (the resource name is singular: corev1.Resource("secret"))`, `secret "x" not found`, err.Error())
	}
}

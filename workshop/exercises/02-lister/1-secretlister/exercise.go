// Package secretlister is workshop exercise 02-lister/1-secretlister.
//
// # A lister of your own
//
// Kind: build. Minutes: 10. Needs: none. Practises: docs/02-lister.md, "One generic lister, many names".
//
// Chapter 2 has no Secret lister. Write one the way chapter 2's typed.go
// writes PodLister: NewSecretLister returns a SecretLister over an indexer
// of Secrets, built on lister.ResourceIndexer[*corev1.Secret] (about ten
// lines). The NotFound error must be the API's: apierrors.IsNotFound is
// true and the message reads `secret "x" not found`, as client-go's
// generated lister says.
package secretlister

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// SecretLister lists Secrets from an informer's cache.
type SecretLister interface {
	List(selector labels.Selector) ([]*corev1.Secret, error)
	Secrets(namespace string) SecretNamespaceLister
}

// SecretNamespaceLister lists and gets the Secrets of one namespace.
type SecretNamespaceLister interface {
	List(selector labels.Selector) ([]*corev1.Secret, error)
	Get(name string) (*corev1.Secret, error)
}

// NewSecretLister returns a SecretLister over an indexer of Secrets.
func NewSecretLister(indexer store.Indexer) SecretLister {
	return nil
}

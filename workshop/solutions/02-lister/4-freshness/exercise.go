// Package freshness is workshop exercise 02-lister/4-freshness.
//
// # Staleness: did the cache see my write?
//
// Kind: build. Minutes: 10. Needs: none. Practises: docs/02-lister.md, "Questions readers ask".
//
// A controller creates a ConfigMap through the API and, at once, looks it
// up in its lister. The lister reads the informer's cache, which learns of
// the create only when the watch event arrives: until then the lookup says
// NotFound. Worse, if an older ConfigMap of the same name was deleted a
// moment ago, the cache may still hold that one.
//
// Write Seen: has the cache caught up with the object the API server
// returned from the create? The object is identified by its UID (names
// are reused; UIDs are not). Seen is false, with no error, while the
// cache has no such name or holds another object of that name; true once
// it holds the created one (or a later state of it); any error other than
// NotFound is returned. A controller that gets false returns and waits for
// the next event (level-triggered), rather than creating a second copy.
package freshness

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	lister "github.com/informer-anatomy/informer-anatomy/chapters/02-lister"
)

// Seen reports whether l's cache holds created (by UID).
func Seen(l lister.ConfigMapNamespaceLister, created *corev1.ConfigMap) (bool, error) {
	cm, err := l.Get(created.Name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return cm.UID == created.UID, nil
}

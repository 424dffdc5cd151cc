package factory

import (
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/informer-anatomy/informer-anatomy/internal/kube"
)

// Client is the factory's way to the API server: one typed REST client per
// group version the typed informers use, and unstructured ones made on
// demand for ForResource. It stands in for the generated clientset
// (k8s.io/client-go/kubernetes), of which an informer needs only
// `Get() *rest.Request`.
type Client struct {
	config *rest.Config
	typed  map[schema.GroupVersion]rest.Interface

	mu           sync.Mutex
	unstructured map[schema.GroupVersion]rest.Interface // guarded by mu
}

// NewForConfig builds the typed clients for core/v1 and apps/v1 at once, so
// a bad config fails here, with its reason, rather than inside an informer.
func NewForConfig(cfg *rest.Config) (*Client, error) {
	c := &Client{config: cfg, typed: map[schema.GroupVersion]rest.Interface{}, unstructured: map[schema.GroupVersion]rest.Interface{}}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion} {
		rc, err := kube.RESTClientFor(cfg, gv)
		if err != nil {
			return nil, err
		}
		c.typed[gv] = rc
	}
	return c, nil
}

// RESTClient returns the typed client of a group version (core/v1 or apps/v1).
func (c *Client) RESTClient(gv schema.GroupVersion) (rest.Interface, error) {
	if rc, ok := c.typed[gv]; ok {
		return rc, nil
	}
	return nil, fmt.Errorf("no typed client for %s (typed: core/v1, apps/v1; use ForResource for others)", gv)
}

// UnstructuredClient returns a client that decodes gv's objects as
// unstructured.Unstructured.
func (c *Client) UnstructuredClient(gv schema.GroupVersion) (rest.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rc, ok := c.unstructured[gv]; ok {
		return rc, nil
	}
	rc, err := kube.UnstructuredRESTClientFor(c.config, gv)
	if err != nil {
		return nil, err
	}
	c.unstructured[gv] = rc
	return rc, nil
}

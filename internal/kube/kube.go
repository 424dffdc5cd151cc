// Package kube holds the small amount of client plumbing the chapters share:
// a runtime.Scheme that knows the built-in types the chapters use, and a REST
// client for one API group/version built on k8s.io/client-go/rest.
//
// It replaces client-go's generated clientset (k8s.io/client-go/kubernetes),
// which the project does not depend on: a ListerWatcher only needs
// `Get() *rest.Request` (see chapter 3's NewListWatchFromClient).
package kube

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/rest"
)

// Scheme knows core/v1 and apps/v1, and the meta/v1 types (Status, WatchEvent,
// ListOptions) every group version uses.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	metav1.AddToGroupVersion(s, OptionsVersion)
	return s
}()

// Codecs decodes and encodes the types of Scheme.
var Codecs = serializer.NewCodecFactory(Scheme)

// RESTClientFor returns a client for one group version, e.g.
// schema.GroupVersion{Version: "v1"} for core or {Group: "apps", Version: "v1"}.
// It decodes responses into the typed objects of Scheme, which is what the
// reflector's expected-type check relies on.
func RESTClientFor(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	return restClientFor(cfg, gv, Codecs.WithoutConversion(), "a REST client")
}

// restClientFor builds a client for gv that decodes with ns: the core group
// lives under /api, every other group under /apis.
func restClientFor(cfg *rest.Config, gv schema.GroupVersion, ns runtime.NegotiatedSerializer, what string) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = ns
	if c.UserAgent == "" {
		c.UserAgent = "informer-anatomy"
	}
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("building %s for %s at %s: %w", what, gv, cfg.Host, err)
	}
	return client, nil
}

// ParameterCodec decodes URL query parameters into ListOptions (the embedded
// API server's side); metav1.ParameterCodec, which clients use to encode them,
// cannot decode. Use it with OptionsVersion, the group version Scheme
// registers ListOptions under; the query parameters are the same in every
// version.
var ParameterCodec = runtime.NewParameterCodec(Scheme)

// OptionsVersion is the group version ListOptions are registered under in Scheme.
var OptionsVersion = schema.GroupVersion{Version: "v1"}

// UnstructuredRESTClientFor returns a client for one group version that
// decodes every response into unstructured.Unstructured(List): a client for
// resources this scheme does not know (custom resources, or anything the
// factory's ForResource is asked for).
func UnstructuredRESTClientFor(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	return restClientFor(cfg, gv, unstructuredSerializer{}, "an unstructured REST client")
}

// unstructuredSerializer speaks JSON into and out of Unstructured, framed
// for watch streams; what k8s.io/client-go/dynamic does internally
// (dynamic/scheme.go: basicNegotiatedSerializer).
type unstructuredSerializer struct{}

// watchEnvelopeSerializer decodes a watch stream's frames, each a
// metav1.WatchEvent envelope ({"type", "object"}) with no kind of its own:
// a JSON serializer over Scheme, which registers WatchEvent, takes the
// kind from the type decoded into. The unstructured scheme cannot: it
// wants a kind at the top of every document, and failed each event with
// "Object 'Kind' is missing" (an ERROR event, and a relist, per event).
// The envelope's object is then decoded by Serializer, as Unstructured.
var watchEnvelopeSerializer = jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, Scheme, Scheme, jsonserializer.SerializerOptions{})

func (unstructuredSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{
		MediaType: "application/json", MediaTypeType: "application", MediaTypeSubType: "json",
		EncodesAsText: true,
		Serializer:    statusAware{unstructured.UnstructuredJSONScheme},
		StreamSerializer: &runtime.StreamSerializerInfo{
			EncodesAsText: true, Serializer: watchEnvelopeSerializer, Framer: jsonserializer.Framer,
		},
	}}
}

func (unstructuredSerializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (unstructuredSerializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

// statusAware decodes a metav1.Status as one, and everything else as
// Serializer does (Unstructured). client-go's rest.Result turns an error
// response into the server's own error only when the body decodes into a
// *metav1.Status (rest/request.go: Result.Error); as Unstructured it fell
// back to a generic one, and the server's message was lost: a 500 with
// "etcd is down" read `an error on the server ("unknown")`, a 403 with who
// may not do what `unknown (get pods)`. client-go's dynamic client decodes
// with a scheme that knows Status for the same reason (dynamic/scheme.go:
// unstructuredCreater). An ERROR watch event's object is then a
// *metav1.Status too, which apierrors.FromObject reads as it reads the
// Unstructured form.
type statusAware struct{ runtime.Serializer }

func (s statusAware) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := s.Serializer.Decode(data, defaults, into)
	if err != nil || into != nil || gvk == nil || gvk.Kind != "Status" || gvk.Group != "" || (gvk.Version != "v1" && gvk.Version != "") {
		return obj, gvk, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, gvk, err
	}
	st := &metav1.Status{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, st) != nil {
		return obj, gvk, err
	}
	return st, gvk, nil
}

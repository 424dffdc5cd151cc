package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informer-anatomy/informer-anatomy/internal/kube"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// ServeHTTP serves the Kubernetes REST paths of the served resources:
//
//	/api/v1[/namespaces/{ns}]/{resource}[/{name}]
//	/apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}]
//
// plus /healthz, /readyz, /livez and /version.
func (s *Server) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case "/healthz", "/readyz", "/livez":
		_, _ = io.WriteString(rw, "ok")
		return
	case "/version":
		writeJSON(rw, http.StatusOK, map[string]string{"major": "1", "minor": "36", "gitVersion": "v1.36.0-informer-anatomy-embedded"})
		return
	}
	res, namespace, name, err := parsePath(req.URL.Path)
	if err != nil {
		writeStatus(rw, err)
		return
	}
	var opts metav1.ListOptions
	if err := kube.ParameterCodec.DecodeParameters(req.URL.Query(), kube.OptionsVersion, &opts); err != nil {
		writeStatus(rw, apierrors.NewBadRequest(err.Error()))
		return
	}
	ctx := req.Context()
	switch {
	case req.Method == http.MethodGet && name == "" && opts.Watch:
		s.serveWatch(ctx, rw, res, namespace, opts)
	case req.Method == http.MethodGet && name == "":
		list, err := s.List(ctx, res, namespace, opts)
		if err != nil {
			writeStatus(rw, err)
			return
		}
		list.GetObjectKind().SetGroupVersionKind(res.GVR.GroupVersion().WithKind(res.Kind + "List"))
		writeJSON(rw, http.StatusOK, list)
	case req.Method == http.MethodGet:
		s.respond(rw, http.StatusOK, res, func() (runtime.Object, error) {
			if err := s.admit(ctx, "get", res, namespace, name, req.URL.Query(), nil); err != nil {
				return nil, err
			}
			return s.Get(res, namespace, name)
		})
	case req.Method == http.MethodPost && name == "":
		s.respond(rw, http.StatusCreated, res, func() (runtime.Object, error) {
			obj, err := decodeBody(req, res, namespace)
			if err != nil {
				return nil, err
			}
			if err := s.admit(ctx, "create", res, namespace, "", req.URL.Query(), nil); err != nil {
				return nil, err
			}
			return s.create(res, obj)
		})
	case req.Method == http.MethodPut && name != "":
		s.respond(rw, http.StatusOK, res, func() (runtime.Object, error) {
			obj, err := decodeBody(req, res, namespace)
			if err != nil {
				return nil, err
			}
			if err := s.admit(ctx, "update", res, namespace, name, req.URL.Query(), nil); err != nil {
				return nil, err
			}
			return s.update(res, obj)
		})
	case req.Method == http.MethodDelete && name != "":
		if err := s.admit(ctx, "delete", res, namespace, name, req.URL.Query(), nil); err != nil {
			writeStatus(rw, err)
			return
		}
		if err := s.Delete(res, namespace, name); err != nil {
			writeStatus(rw, err)
			return
		}
		writeJSON(rw, http.StatusOK, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
	default:
		writeStatus(rw, apierrors.NewMethodNotSupported(res.GVR.GroupResource(), req.Method))
	}
}

func (s *Server) respond(rw http.ResponseWriter, code int, res Resource, do func() (runtime.Object, error)) {
	obj, err := do()
	if err != nil {
		writeStatus(rw, err)
		return
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	writeJSON(rw, code, obj)
}

// serveWatch streams events as newline-delimited JSON watch events
// ({"type": ..., "object": ...}), flushing after each one.
func (s *Server) serveWatch(ctx context.Context, rw http.ResponseWriter, res Resource, namespace string, opts metav1.ListOptions) {
	if err := s.admit(ctx, "watch", res, namespace, "", listQuery(opts), &opts); err != nil {
		writeStatus(rw, err)
		return
	}
	w, err := s.newWatcher(res, namespace, opts)
	if err != nil {
		writeStatus(rw, err)
		return
	}
	flusher, _ := rw.(http.Flusher)
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Transfer-Encoding", "chunked")
	rw.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	enc := json.NewEncoder(rw)
	s.run(ctx, w, nil, func(ev event) bool {
		var err error
		if ev.raw != nil {
			_, err = rw.Write(ev.raw)
		} else {
			obj := ev.obj.DeepCopyObject()
			// Each object's own kind, from the scheme: an event injected with
			// an object of another type must reach the client as that type.
			if gvks, _, err := kube.Scheme.ObjectKinds(obj); err == nil && ev.typ != watch.Error {
				obj.GetObjectKind().SetGroupVersionKind(gvks[0])
			}
			err = enc.Encode(struct {
				Type   watch.EventType `json:"type"`
				Object runtime.Object  `json:"object"`
			}{ev.typ, obj})
		}
		if err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	})
}

func parsePath(path string) (res Resource, namespace, name string, err error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var gv schema.GroupVersion
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		gv, parts = schema.GroupVersion{Version: parts[1]}, parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		gv, parts = schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:]
	default:
		return res, "", "", apierrors.NewNotFound(schema.GroupResource{}, path)
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		namespace, parts = parts[1], parts[2:]
	}
	if len(parts) == 0 || len(parts) > 2 {
		return res, "", "", apierrors.NewNotFound(schema.GroupResource{}, path)
	}
	res, ok := ResourceFor(gv.WithResource(parts[0]))
	if !ok {
		return res, "", "", apierrors.NewNotFound(schema.GroupResource{Group: gv.Group, Resource: parts[0]},
			fmt.Sprintf("(the embedded API server serves pods, configmaps, secrets, endpoints, apps/v1 replicasets and deployments; not %s)", gv.WithResource(parts[0])))
	}
	if len(parts) == 2 {
		name = parts[1]
	}
	return res, namespace, name, nil
}

func decodeBody(req *http.Request, res Resource, namespace string) (runtime.Object, error) {
	obj := res.newObj()
	if err := json.NewDecoder(req.Body).Decode(obj); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the request body is not a valid %s: %v", res.Kind, err))
	}
	m := obj.(metav1.Object)
	if m.GetNamespace() == "" {
		m.SetNamespace(namespace)
	} else if namespace != "" && m.GetNamespace() != namespace {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return obj, nil
}

func writeStatus(rw http.ResponseWriter, err error) {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	st := se.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	writeJSON(rw, int(st.Code), &st)
}

func writeJSON(rw http.ResponseWriter, code int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	_ = json.NewEncoder(rw).Encode(v)
}

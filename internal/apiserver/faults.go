package apiserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fault makes the server answer matching requests with an error status.
type Fault struct {
	// Verb is list, watch, get, create, update or delete; "" matches all.
	Verb string
	// Status is the HTTP status code: 403, 410, 429, 500, 503, 504, ...
	Status int
	// Cause, if set, is added to the status details (e.g.
	// metav1.CauseTypeResourceVersionTooLarge with Status 504).
	Cause metav1.CauseType
	// Count is how many matching requests fail; 0 means 1.
	Count int
}

type fault struct {
	Fault
	stall chan struct{} // set by StallNext: hold the request until closed
}

// Inject makes the next f.Count requests that match f.Verb fail with
// f.Status. A 429 carries no Retry-After header, so client-go's REST client
// hands it to the caller instead of retrying by itself.
func (s *Server) Inject(f Fault) {
	if f.Count <= 0 {
		f.Count = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{Fault: f})
}

// StallNext holds the next request that matches verb until release is
// called (or the client gives up, or ClearFaults is called).
func (s *Server) StallNext(verb string) (release func()) {
	f := &fault{Fault: Fault{Verb: verb, Count: 1}, stall: make(chan struct{})}
	var once sync.Once
	release = func() { once.Do(func() { close(f.stall) }) }
	s.mu.Lock()
	s.faults = append(s.faults, f)
	s.releases = append(s.releases, release)
	s.mu.Unlock()
	return release
}

// ClearFaults drops every injected fault not yet used up and releases every
// request held by StallNext: the end of a run of faults, after which a
// client should converge. Ours, for tests; a real server has no such knob.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	releases := s.releases
	s.releases = nil
	s.mu.Unlock()
	for _, release := range releases {
		release()
	}
}

// refuseIfStopped gives in-process clients (List, Watch) what an HTTP
// client gets between Stop and Restart: connection refused, in the form
// client-go's utilnet.IsConnectionRefused recognises.
func (s *Server) refuseIfStopped() error {
	s.httpMu.Lock()
	stopped := s.httpSrv == nil
	s.httpMu.Unlock()
	if !stopped {
		return nil
	}
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// admit records a request, applies the first matching fault, and, for a
// list or watch (opts != nil) that no fault answered, validates its options
// as kube-apiserver does.
//
// A fault with Count > 1 is shared by concurrent requests, and its Count is
// decremented under s.mu; so what the request needs after unlocking (the
// status, the cause, the stall channel) is copied while still holding it.
// Reading *hit after Unlock would race with the next request's decrement.
//
// Faults come before validation because what they stand for (authorization,
// priority and fairness, a proxy) answers before kube-apiserver's handler
// reads the options. A stalled request is validated when it arrives, so the
// log says at once whether it will be refused.
func (s *Server) admit(ctx context.Context, verb string, res Resource, namespace, name string, query url.Values, opts *metav1.ListOptions) error {
	s.mu.Lock()
	req := Request{Verb: verb, Resource: res.GVR.Resource, Namespace: namespace, Name: name, Query: query}
	if opts != nil {
		req.ResourceVersion = opts.ResourceVersion
		req.ResourceVersionMatch = opts.ResourceVersionMatch
		req.SendInitialEvents = opts.SendInitialEvents
		req.AllowWatchBookmarks = opts.AllowWatchBookmarks
	}
	var (
		matched bool
		f       Fault
		stall   chan struct{}
	)
	for i, h := range s.faults {
		if h.Verb == "" || h.Verb == verb {
			matched, f, stall = true, h.Fault, h.stall
			if h.Count--; h.Count == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			break
		}
	}
	if matched && stall == nil {
		req.Fault = f.Status
	}
	var invalid *apierrors.StatusError
	if opts != nil && req.Fault == 0 {
		if invalid = validateListOptions(verb, *opts, s.watchList); invalid != nil {
			req.Refused = int(invalid.ErrStatus.Code)
		}
	}
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	if stall != nil {
		select {
		case <-stall:
		case <-ctx.Done():
			return apierrors.NewTimeoutError("request stalled by the test and abandoned by the client", 0)
		}
	} else if matched {
		return statusError(f, verb, res)
	}
	if invalid != nil {
		return invalid
	}
	return nil
}

func statusError(f Fault, verb string, res Resource) *apierrors.StatusError {
	msg := fmt.Sprintf("injected by the embedded API server's fault injection (%d on %s %s)", f.Status, verb, res.GVR.Resource)
	var err *apierrors.StatusError
	switch f.Status {
	case http.StatusGone:
		err = apierrors.NewResourceExpired("too old resource version: " + msg)
	case http.StatusTooManyRequests:
		err = apierrors.NewTooManyRequests(msg, 0)
	case http.StatusInternalServerError:
		err = apierrors.NewInternalError(fmt.Errorf("%s", msg))
	case http.StatusForbidden:
		//lint:ignore ST1005 kube-apiserver's own message begins so
		err = apierrors.NewForbidden(res.GVR.GroupResource(), "", fmt.Errorf(`User "test" cannot %s resource %q: %s`, verb, res.GVR.Resource, msg))
	default:
		err = apierrors.NewGenericServerResponse(f.Status, verb, res.GVR.GroupResource(), "", msg, 0, false)
	}
	if f.Cause != "" {
		if err.ErrStatus.Details == nil {
			err.ErrStatus.Details = &metav1.StatusDetails{}
		}
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: f.Cause, Message: string(f.Cause)})
	}
	return err
}

// listQuery renders ListOptions the way a client sends them, for the log.
func listQuery(opts metav1.ListOptions) url.Values {
	q, err := metav1.ParameterCodec.EncodeParameters(&opts, metav1.SchemeGroupVersion)
	if err != nil {
		return url.Values{}
	}
	return q
}

package apiserver

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SetWatchListEnabled switches, while the server runs, between a server that
// streams a watch-list (sendInitialEvents, the default) and one that answers
// as a kube-apiserver started with --feature-gates=WatchList=false. The
// switch applies to requests that arrive afterwards: a stream already open
// goes on. See [Options.DisableWatchList].
func (s *Server) SetWatchListEnabled(enabled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchList = enabled
}

// WatchListEnabled reports whether the server currently streams a watch-list.
func (s *Server) WatchListEnabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watchList
}

// validateListOptions checks a LIST's or WATCH's options with the
// validation kube-apiserver itself runs on them (the list handler in
// k8s.io/apiserver's endpoints/handlers/get.go calls apimachinery's
// ValidateListOptions with its WatchList feature gate) and answers as that
// handler does: 422 Invalid, reason "Invalid", for the kind
// ListOptions.meta.k8s.io, with one cause per rule broken.
//
// Calling apimachinery's function rather than restating its rules keeps the
// answer the one a client meets on a real server, to the word: with
// watch-list off, a client-go reflector's streaming WATCH gets
//
//	ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden:
//	sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled
//
// The rules that hold with the gate on apply here too, as on a real server:
// resourceVersionMatch on a watch needs sendInitialEvents, sendInitialEvents
// needs resourceVersionMatch=NotOlderThan, and a LIST may not carry
// sendInitialEvents at all.
//
// Unlike kube-apiserver with the gate on, the server does not turn a plain
// WATCH from resourceVersion "" or "0" into a watch-list (apimachinery's
// SetListOptionsDefaults): such a watch gets its synthetic ADDED events but
// no initial-events-end bookmark.
func validateListOptions(verb string, opts metav1.ListOptions, watchList bool) *apierrors.StatusError {
	// Only the fields the validation reads. Converting the whole options
	// would also parse the selectors, whose errors the server reports after
	// this as 400 Bad Request. (kube-apiserver parses them first, so a
	// request with a bad selector and invalid options gets its 400 there,
	// our 422 here.)
	in := metainternalversion.ListOptions{
		// The in-process Watch is called without Watch set; the verb decides.
		Watch:                verb == "watch",
		AllowWatchBookmarks:  opts.AllowWatchBookmarks,
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Continue:             opts.Continue,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	errs := validation.ValidateListOptions(&in, watchList)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
}

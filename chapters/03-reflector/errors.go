package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// WatchErrorHandler is told whenever ListAndWatch fails (the reflector then
// backs off and retries) and, in this implementation, also of every watch
// event the reflector had to drop or refuse, of every LIST whose items it
// refused in part, of every watch that ended with an error and so causes a
// relist, and of watch requests retried (429s, refused connections) for a
// minute or more with none opening. A stop is never reported. It must
// return quickly.
//
// Mirrors [k8s.io/client-go/tools/cache.WatchErrorHandler] (reflector.go).
type WatchErrorHandler func(r *Reflector, err error)

// WatchErrorHandlerWithContext is [WatchErrorHandler] with the reflector's
// context.
//
// Mirrors [k8s.io/client-go/tools/cache.WatchErrorHandlerWithContext] (reflector.go).
type WatchErrorHandlerWithContext func(ctx context.Context, r *Reflector, err error)

// DefaultWatchErrorHandler logs err through the contextual klog logger
// (klog.FromContext(ctx): the logger a caller put in the reflector's
// context, else klog's global one), as upstream's does: an expired
// resourceVersion at V(4) ("Watch closed", routine: the next cycle
// relists), a normal close (io.EOF) not at all, an unexpected EOF at V(1),
// a watch that ended with an error (ours hands these to the handler; see
// watchEndedError) at default verbosity ("Warning: watch ended with error",
// as upstream's watch() logs them), and everything else through
// utilruntime.HandleErrorWithContext ("Failed to watch"), which logs it as
// an error with the same logger and calls every function in
// utilruntime.ErrorHandlers.
//
// Mirrors [k8s.io/client-go/tools/cache.DefaultWatchErrorHandler] (reflector.go).
// Ours wraps its errors (with %w), so they are matched with errors.Is where
// upstream compares with ==; ours also reaches this handler for dropped or
// refused events and for watch requests retried for a minute (see
// [WatchErrorHandler]), which upstream sends to
// utilruntime.HandleErrorWithContext directly or does not report, so they
// end up in the same logger.
func DefaultWatchErrorHandler(ctx context.Context, r *Reflector, err error) {
	switch {
	case isExpiredError(err):
		klog.FromContext(ctx).V(4).Info("Watch closed", "reflector", r.name, "type", r.typeDescription, "err", err)
	case errors.Is(err, io.EOF):
		// closed normally
	case errors.Is(err, io.ErrUnexpectedEOF):
		klog.FromContext(ctx).V(1).Info("Watch closed with unexpected EOF", "reflector", r.name, "type", r.typeDescription, "err", err)
	case errors.As(err, new(*watchEndedError)):
		// Upstream's watch() logs a watch that ended with an error it
		// does not retry (other than an expiry) with this line, and
		// returns nil; ours hands it here, so it is logged the same.
		klog.FromContext(ctx).Info("Warning: watch ended with error", "reflector", r.name, "type", r.typeDescription, "err", errors.Unwrap(err))
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "Failed to watch", "reflector", r.name, "type", r.typeDescription)
	}
}

// watchEndedError is how ListAndWatch ends when its watch ended with an
// error that calls for a relist (an ERROR event, a very short watch, an
// undecodable stream): "watch of <type> ended: <err>", wrapping err. Ours:
// upstream's watch() logs these ("Warning: watch ended with error") and
// returns nil; ours returns them, so the WatchErrorHandler can see why the
// next cycle relists, and DefaultWatchErrorHandler logs them as upstream's
// watch() does.
type watchEndedError struct {
	typeDescription string
	err             error
}

func (e *watchEndedError) Error() string {
	return fmt.Sprintf("watch of %v ended: %v", e.typeDescription, e.err)
}

func (e *watchEndedError) Unwrap() error { return e.err }

// VeryShortWatchError is the error of a watch that the server closed within
// one second without sending a single event: usually a proxy or load balancer
// cutting the connection, and worth a warning, since the reflector would
// otherwise spin through relists.
//
// Mirrors [k8s.io/client-go/tools/cache.VeryShortWatchError] (reflector.go).
type VeryShortWatchError struct {
	// Name is the reflector's.
	Name string
}

func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: Unexpected watch close - watch lasted less than a second and no items received", e.Name)
}

// errWatchUntrusted ends a watch whose stream carried an event the
// reflector could not place in time (an empty or non-numeric
// resourceVersion). handleWatch has already reported the event; the cycle
// ends without a second report, and the next cycle relists.
var errWatchUntrusted = errors.New("watch ended: an event could not be trusted, relisting")

// errorStopRequested marks a watch that ended because the reflector was
// stopped; it is not reported.
var errorStopRequested = errors.New("stop requested")

// isExpiredError: the requested resourceVersion is older than the server
// keeps (410). Old servers said Gone, newer ones say Expired; both mean "relist".
func isExpiredError(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLargeResourceVersionError: the requested resourceVersion is newer than
// the server has (for example an API server behind its peers, or a restored
// etcd). The cause is the modern signal; the message check covers API servers
// before 1.18 that sent only a Timeout with this text.
func isTooLargeResourceVersionError(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsTimeout(err) || !errors.As(err, &status) {
		return false
	}
	st := status.Status()
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Message == "Too large resource version" {
				return true
			}
		}
	}
	return strings.Contains(st.Message, "Too large resource version")
}

// isWatchErrorRetriable: a watch request that failed because the server is
// unreachable (connection refused) or overloaded (429) is retried, after a
// backoff, from the same resourceVersion. Relisting would only add load to a
// server that is already struggling, and the events since that RV will still
// be there when it comes back.
func isWatchErrorRetriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}

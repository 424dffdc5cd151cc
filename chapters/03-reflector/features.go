package reflector

import (
	clientfeatures "k8s.io/client-go/features"
)

// Feature names a client-go feature gate.
//
// Mirrors [k8s.io/client-go/features.Feature] (features.go).
type Feature string

// WatchListClient lets a reflector fetch the initial state as a stream
// (WATCH with sendInitialEvents=true) instead of a LIST. Beta since 1.30,
// on by default since 1.35, so in client-go v0.37.2 every reflector streams
// unless this is switched off or its ListerWatcher opts out.
//
// Mirrors [k8s.io/client-go/features.WatchListClient] (known_features.go).
const WatchListClient Feature = "WatchListClient"

// Gates tells whether a feature is on.
//
// Mirrors [k8s.io/client-go/features.Gates] (features.go).
type Gates interface {
	Enabled(key Feature) bool
}

// FeatureGates returns the gates every reflector of this process consults:
// client-go's own, [k8s.io/client-go/features.FeatureGates], asked afresh
// each time. So a gate is what client-go's reflector would see: v0.37.2's
// default, overridden by an environment variable KUBE_FEATURE_<feature>
// (KUBE_FEATURE_WatchListClient=false switches streaming off; read once per
// process, and a value strconv.ParseBool refuses is logged by client-go,
// "Could not set feature gate", and the default kept), or set in code: a
// program that replaces client-go's gates (features.ReplaceFeatureGates,
// as Kubernetes components do with their --feature-gates flag) or sets one
// on them reaches this reflector too. A reflector reads the gate once, when
// it is built, as upstream's does.
//
// The reflector reads only WatchListClient. The gates of the queue and the
// informer (InOrderInformers, InOrderInformersBatchProcess, AtomicFIFO,
// UnlockWhileProcessingFIFO) are plain options of chapters 4 and 5, set to
// v0.37.2's defaults there, so that an earlier chapter never depends on a
// later one's switches.
//
// Mirrors [k8s.io/client-go/features.FeatureGates] (features.go) by asking
// it. A per-reflector choice that needs neither the environment nor the
// process-wide registry is [ReflectorOptions].UseWatchList (ours).
func FeatureGates() Gates { return clientGoGates{} }

// clientGoGates asks client-go's registry; Feature has the same names.
type clientGoGates struct{}

func (clientGoGates) Enabled(key Feature) bool {
	// Asking for a gate nobody registered is a programming error: client-go's
	// default registry panics, as it should.
	return clientfeatures.FeatureGates().Enabled(clientfeatures.Feature(key))
}

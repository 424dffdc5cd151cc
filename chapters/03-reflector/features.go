package reflector

import (
	"fmt"
	"os"
	"strconv"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
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

// knownFeatures are the gates this chapter reads, with v0.37.2's defaults.
// The reflector reads no other gate. The gates of the queue and the
// informer (InOrderInformers, InOrderInformersBatchProcess, AtomicFIFO,
// UnlockWhileProcessingFIFO) are plain options of chapters 4 and 5, set to
// v0.37.2's defaults there, so that an earlier chapter never depends on a
// later one's switches.
var knownFeatures = map[Feature]bool{
	WatchListClient: true,
}

// Gates tells whether a feature is on.
//
// Mirrors [k8s.io/client-go/features.Gates] (features.go).
type Gates interface {
	Enabled(key Feature) bool
}

// FeatureGates returns the gates every reflector of this process consults:
// v0.37.2's defaults, each overridden by an environment variable named
// KUBE_FEATURE_<feature> (KUBE_FEATURE_WatchListClient=false switches
// streaming off) that strconv.ParseBool accepts. The environment is read
// once, at the first question, as client-go's is; a value it cannot parse
// is reported through utilruntime.HandleError and the default kept.
//
// Mirrors [k8s.io/client-go/features.FeatureGates] (features.go) with its
// default environment-variable implementation (envvar.go). Upstream's gates
// can also be replaced or set from code (ReplaceFeatureGates, Set); ours
// cannot: a reflector that must stream or must LIST says so in
// [ReflectorOptions].UseWatchList instead.
func FeatureGates() Gates { return envGates }

var envGates = &envVarGates{}

type envVarGates struct {
	once    sync.Once
	enabled map[Feature]bool // written once, under once
}

func (g *envVarGates) Enabled(key Feature) bool {
	g.once.Do(g.read)
	v, ok := g.enabled[key]
	if !ok {
		// Asking for a gate nobody registered is a programming error, as
		// upstream treats it (it panics too).
		panic(fmt.Sprintf("feature %q is not one this package knows", key))
	}
	return v
}

func (g *envVarGates) read() {
	g.enabled = make(map[Feature]bool, len(knownFeatures))
	for f, def := range knownFeatures {
		g.enabled[f] = def
		name := "KUBE_FEATURE_" + string(f)
		raw, set := os.LookupEnv(name)
		if !set {
			continue
		}
		v, err := strconv.ParseBool(raw)
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("%s=%q is not a boolean (use true or false); the %s gate stays at its default, %t", name, raw, f, def))
			continue
		}
		g.enabled[f] = v
	}
}

package prometheus

import (
	"bytes"
	"fmt"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/features"

	"github.com/informer-anatomy/informer-anatomy/internal/metrics"
)

// latencyOpts are the handler latency's options, as package-level latency
// is made with them.
func latencyOpts() *k8smetrics.HistogramOpts {
	return &k8smetrics.HistogramOpts{
		Subsystem:      "informer",
		Name:           "handler_processing_latency_seconds",
		Help:           metrics.HelpHandlerProcessingLatency,
		Buckets:        metrics.InformerBuckets,
		StabilityLevel: k8smetrics.ALPHA,
	}
}

// gatherBoth gathers each registry and requires the same families, to the
// last field of their protobuf (NaN equal to NaN) and to the byte in the
// text format /metrics serves.
func gatherBoth(t *testing.T, theirs, ours k8smetrics.KubeRegistry) []*dto.MetricFamily {
	t.Helper()
	want, err := theirs.Gather()
	require.NoError(t, err)
	got, err := ours.Gather()
	require.NoError(t, err)
	require.Equal(t, len(want), len(got), "families")
	var wantText, gotText bytes.Buffer
	for i := range want {
		require.True(t, proto.Equal(want[i], got[i]), "family %d:\nwant %v\ngot  %v", i, want[i], got[i])
		_, err := expfmt.MetricFamilyToText(&wantText, want[i])
		require.NoError(t, err)
		_, err = expfmt.MetricFamilyToText(&gotText, got[i])
		require.NoError(t, err)
	}
	require.Equal(t, wantText.String(), gotText.String())
	return got
}

// TestLatencyVecGathersAsComponentBase: the same observations given to
// component-base's HistogramVec (what the handler latency was) and to
// latencyVec, with the same options, each registered on a registry of
// component-base's, gather to the same families: name, help with its
// "[ALPHA]" prefix, type, buckets, labels, counts, sums and creation
// times (the test runs in a synctest bubble, whose clock moves only when
// it sleeps, so both series of a label set are created at one instant).
// Values on a bucket's bound, past the last one, +Inf, NaN and negative
// ones included; a deleted series goes from both. With native histograms
// on, latencyVec hands out component-base's own series, and the two still
// gather alike.
func TestLatencyVecGathersAsComponentBase(t *testing.T) {
	for _, nativeOn := range []bool{false, true} {
		t.Run(fmt.Sprint("native=", nativeOn), func(t *testing.T) {
			if nativeOn {
				setNativeHistograms(t, true)
			}
			synctest.Test(t, func(t *testing.T) {
				theirs := k8smetrics.NewHistogramVec(latencyOpts(), labels)
				ours := newLatencyVec(latencyOpts(), labels)
				require.IsType(t, metrics.Noop{}, ours.newWriter("n", "", "v1", "pods", "h#0"), "not registered: records nothing")
				theirsReg, oursReg := k8smetrics.NewKubeRegistry(), k8smetrics.NewKubeRegistry()
				theirsReg.MustRegister(theirs)
				oursReg.MustRegister(ours)
				gatherBoth(t, theirsReg, oursReg)

				values := [][]float64{
					{0, 1e-9, 0.001, 0.0010000001, 0.3, 0.3, 2.5, 10, 11, math.Inf(1)},
					{-1, 0.005, 0.049, 5, math.NaN(), 0.02},
					{},
				}
				ids := [][]string{
					{"informer-a", "", "v1", "configmaps", "main.handler#0"},
					{"informer-a", "apps", "v1", "deployments", "main.handler#1"},
					{"informer-b", "", "v1", "pods", "main.other#0"},
				}
				for i, id := range ids {
					time.Sleep(time.Second) // each label set created at its own time
					th, ob := theirs.WithLabelValues(id...), ours.newWriter(id...)
					if !nativeOn {
						require.IsType(t, &latencySeries{}, ob, "a series of one writer")
					}
					for _, v := range values[i] {
						th.Observe(v)
						ob.Observe(v)
					}
				}
				got := gatherBoth(t, theirsReg, oursReg)
				require.Len(t, got, 1)
				require.Equal(t, "informer_handler_processing_latency_seconds", got[0].GetName())
				require.Equal(t, "[ALPHA] "+metrics.HelpHandlerProcessingLatency, got[0].GetHelp())
				require.Equal(t, dto.MetricType_HISTOGRAM, got[0].GetType())
				require.Len(t, got[0].GetMetric(), 3)
				require.Equal(t, uint64(10), got[0].GetMetric()[0].GetHistogram().GetSampleCount())
				require.Equal(t, nativeOn, got[0].GetMetric()[0].GetHistogram().Schema != nil, "native buckets")

				del := ids[1]
				theirs.Delete(map[string]string{"name": del[0], "group": del[1], "version": del[2], "resource": del[3], "handler": del[4]})
				ours.deleteLabelValues(del...)
				got = gatherBoth(t, theirsReg, oursReg)
				require.Len(t, got[0].GetMetric(), 2, "the deleted series is gone")
			})
		})
	}
}

// setNativeHistograms turns component-base's native histograms on or off
// for the metrics registered from now on, as a component does with its
// NativeHistograms feature gate, and back off at the test's end.
func setNativeHistograms(t *testing.T, on bool) {
	apply := func(on bool) {
		gate := featuregate.NewVersionedFeatureGate(version.MustParse("1.37"))
		require.NoError(t, features.AddFeatureGates(gate))
		require.NoError(t, gate.SetFromMap(map[string]bool{string(features.NativeHistograms): on}))
		features.ApplyFeatureGates(gate)
	}
	apply(on)
	t.Cleanup(func() { apply(false) })
}

// TestLatencyVecGathersWholeObservations: while writers observe, every
// gather shows each series whole: its count is the sum of its buckets,
// and its sum is exactly what those bucket counts add up to (each writer
// observes two values that are powers of two, in different buckets, so
// the sum of n1 of one and n2 of the other is exact). At the end each
// series holds every observation of its writer, and no other's.
func TestLatencyVecGathersWholeObservations(t *testing.T) {
	const writers, gathers = 4, 50
	const small, large = 1.0 / 1024, 1.0 / 8 // buckets 0.001 and 0.25
	vec := newLatencyVec(latencyOpts(), labels)
	reg := k8smetrics.NewKubeRegistry()
	reg.MustRegister(vec)

	// check gathers and checks every series; with observed, that each
	// series (handler "h#<w>") holds observed[w] observations.
	check := func(observed []int) int {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		n := 0
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				h := m.GetHistogram()
				b := h.GetBucket()
				count := h.GetSampleCount()
				require.Equal(t, count, b[len(b)-1].GetCumulativeCount(), "count is the sum of the buckets (none past the last bound)")
				nSmall := b[0].GetCumulativeCount()
				require.Equal(t, float64(nSmall)*small+float64(count-nSmall)*large, h.GetSampleSum(), "the sum is the buckets'")
				if observed != nil {
					w := -1
					for _, l := range m.GetLabel() {
						if l.GetName() == "handler" {
							_, err := fmt.Sscanf(l.GetValue(), "h#%d", &w)
							require.NoError(t, err)
						}
					}
					require.Equal(t, uint64(observed[w]), count, "every observation of writer %d", w)
				}
				n++
			}
		}
		return n
	}

	// The writers observe until the test has gathered often enough.
	stop := make(chan struct{})
	observed := make([]int, writers)
	var wg sync.WaitGroup
	for w := range writers {
		s := vec.newWriter("n", "", "v1", "pods", fmt.Sprintf("h#%d", w))
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					observed[w] = i
					return
				default:
				}
				if i%3 == 0 {
					s.Observe(large)
				} else {
					s.Observe(small)
				}
			}
		})
	}
	for range gathers {
		check(nil)
	}
	close(stop)
	wg.Wait()
	require.Equal(t, writers, check(observed))
}

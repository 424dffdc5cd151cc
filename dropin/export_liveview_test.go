package dropin

import "time"

// UseLiveHistoryClock gives the process a fresh live-view history on the
// clock now, for a test or a benchmark that steps time instead of waiting
// for it, and returns what puts the previous one back.
// The ticker's samples stop meanwhile: the test takes them with
// SampleLiveHistory.
func UseLiveHistoryClock(now func() time.Time) (restore func()) {
	liveHistoryManual.Store(true)
	old := liveHistory.Swap(newLiveHistory(now))
	return func() { liveHistory.Store(old); liveHistoryManual.Store(false) }
}

// SampleLiveHistory is one tick of the history's sampler.
func SampleLiveHistory() { sampleHistory() }

// LiveHistorySamples is how many samples the process's history has taken
// (0 before any page asked).
func LiveHistorySamples() uint64 {
	if h := liveHistory.Load(); h != nil {
		return h.Samples()
	}
	return 0
}

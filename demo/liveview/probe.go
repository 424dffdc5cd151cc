package liveview

import (
	reflector "github.com/informer-anatomy/informer-anatomy/chapters/03-reflector"
	"github.com/informer-anatomy/informer-anatomy/liveprobe"
)

// The reflector's probe lives in liveprobe, one code with
// dropin.LiveViewHandler's; these names keep the demo's (and its
// checkers') spelling.

// ReflectorProbe is [liveprobe.ReflectorProbe].
type ReflectorProbe = liveprobe.ReflectorProbe

// ReflectorState is [liveprobe.ReflectorState], the reflector part of a [Pipeline].
type ReflectorState = liveprobe.ReflectorState

// ProbedRequest is [liveprobe.ProbedRequest].
type ProbedRequest = liveprobe.ProbedRequest

// RecentRequests is [liveprobe.RecentRequests].
const RecentRequests = liveprobe.RecentRequests

// The verbs, phases, fetches and outcomes of [liveprobe].
const (
	VerbStream               = liveprobe.VerbStream
	VerbList                 = liveprobe.VerbList
	VerbWatch                = liveprobe.VerbWatch
	PhaseIdle                = liveprobe.PhaseIdle
	FetchedStream            = liveprobe.FetchedStream
	FetchedList              = liveprobe.FetchedList
	OutcomeConnectionRefused = liveprobe.OutcomeConnectionRefused
	OutcomeClosedEarly       = liveprobe.OutcomeClosedEarly
)

// NewReflectorProbe is [liveprobe.NewReflectorProbe].
func NewReflectorProbe(lw reflector.ListerWatcher) *ReflectorProbe {
	return liveprobe.NewReflectorProbe(lw)
}

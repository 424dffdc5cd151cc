package reflector

// The watch-list oracle: our Reflector must have the same conversation with
// an API server as client-go v0.37.2's, with client-go's feature gates at
// their defaults (WatchListClient on: the initial state is streamed).
//
// How: each scenario is a script run twice, once against client-go's
// Reflector and once against ours, each driving its own scriptedServer
// (watchlist_server_test.go) in a testing/synctest bubble. The script acts
// only when the reflector has settled (it reads one open watch to the end),
// so both meet every write, dropped watch, 410 and fault at the same point.
// What is compared, and must be equal:
//   - every request (verb, resourceVersion, resourceVersionMatch,
//     sendInitialEvents, allowWatchBookmarks, limit, continue, whether a
//     timeout was set) and the server's answer to it;
//   - every store call (Replace with its sorted items and RV, Add, Update,
//     Delete, Bookmark);
//   - at each checkpoint, LastSyncResourceVersion and the store's contents.
//
// client-go's transcript is also checked against the conversation written
// out in each test, read off the v0.37.2 source (tools/cache/reflector.go):
// that proves the scripted server drives client-go the way the comments say,
// and it is the conversation a reader of chapter 3 should see.
//
// TestWatchListOracleGateOff runs the LIST-path scripts with client-go's
// gate off and ours switched by listFirst; FuzzWatchListSameAsClientGo
// decodes arbitrary input into a script of writes and faults.

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
)

// requireGateDefault: these tests are about client-go with its gates at
// their defaults, where WatchListClient is on. KUBE_FEATURE_WatchListClient
// in the environment would change that for client-go.
func requireGateDefault(t *testing.T) {
	t.Helper()
	require.True(t, clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient),
		"client-go's WatchListClient gate is off: unset KUBE_FEATURE_WatchListClient to run the watch-list oracle")
}

// oracle runs sc on both reflectors and requires the same transcript. It
// returns client-go's, for the caller's own checks.
func oracle(t *testing.T, cfg oracleConfig, sc scenario) transcript {
	t.Helper()
	theirs := play(t, clientGoReflector, cfg, sc)
	require.Empty(t, theirs.Problems, "the script or the scripted server went wrong with client-go's reflector")
	require.False(t, anyContains(theirs.Checkpoints, "NEVER SETTLED"),
		"client-go's reflector never settled: the script or the scripted server is wrong\n%v", theirs.Checkpoints)
	ours := play(t, ourReflector, cfg, sc)
	require.Empty(t, ours.Problems, "the script or the scripted server went wrong with our reflector")
	assert.Equal(t, theirs.Requests, ours.Requests, "requests: client-go's (expected) vs ours (actual)")
	assert.Equal(t, theirs.Store, ours.Store, "store calls: client-go's (expected) vs ours (actual)")
	assert.Equal(t, theirs.Checkpoints, ours.Checkpoints, "checkpoints: client-go's (expected) vs ours (actual)")
	return theirs
}

// stream is a watch-list stream request's options as describeRequest
// writes them: what client-go's watchList sends (resourceVersionMatch
// NotOlderThan, sendInitialEvents, bookmarks, a timeout) after its
// resourceVersion.
const stream = "rvm=NotOlderThan sendInitialEvents=true bookmarks timeout"

// streamingScenario: a server that streams, through every way a watch ends.
var streamingScenario = scenario{
	prepare: seedPods(3),
	steps: func(p *player) {
		p.check("streamed")
		p.create("p3")
		p.update("p0")
		p.remove("p1")
		p.check("events")
		p.bookmarkAhead()
		p.check("bookmark")
		p.dropQuiet()
		p.check("quiet drop")
		p.dropNow()
		p.check("drop of a watch with no events")
		p.create("p4")
		p.expire()
		p.check("410 on the watch")
		p.next(failNextWith("stream", expired()))
		p.expire()
		p.check("410 on the watch, then on the stream request")
		p.next(errorEventOnNext("stream", expired()))
		p.expire()
		p.check("410 on the watch, then as the stream's first event")
		p.update("p2")
		p.next(failNextWith("watch", expired()))
		p.dropQuiet()
		p.check("410 on a re-watch request")
	},
}

func TestWatchListOracleStreamingServer(t *testing.T) {
	requireGateDefault(t)
	theirs := oracle(t, oracleConfig{}, streamingScenario)
	assert.Equal(t, []string{
		// The first request is the stream, from RV "": the newest state.
		`WATCH rv="" ` + stream + ` → 3 initial events, bookmark @13`,
		// The writes and the bookmark come on that same watch. A watch
		// closed after a quiet 2s is re-opened from the last RV, no relist.
		`WATCH rv="17" bookmarks timeout → 0 events replayed`,
		// Closed at once with no events (VeryShortWatchError): watch()
		// returns nil, the cycle ends, and the next one streams again
		// from the last RV, with resourceVersionMatch NotOlderThan.
		`WATCH rv="17" ` + stream + ` → 3 initial events, bookmark @17`,
		// A 410 ERROR event on the watch: watch() returns nil without
		// marking the RV unavailable, so the new stream starts at the
		// last RV too, not at "".
		`WATCH rv="18" ` + stream + ` → 4 initial events, bookmark @18`,
		// A 410 on the stream itself marks the RV unavailable: stream
		// again at once from "".
		`WATCH rv="18" ` + stream + ` → 410 Expired`,
		`WATCH rv="" ` + stream + ` → 4 initial events, bookmark @18`,
		// The same for a 410 that arrives as the stream's ERROR event.
		`WATCH rv="18" ` + stream + ` → ERROR event 410 Expired, closed`,
		`WATCH rv="" ` + stream + ` → 4 initial events, bookmark @18`,
		// A 410 answering a plain re-watch request: watch() returns the
		// error, and the next cycle streams from the last RV.
		`WATCH rv="19" bookmarks timeout → 410 Expired`,
		`WATCH rv="19" ` + stream + ` → 4 initial events, bookmark @19`,
	}, theirs.Requests, "client-go's requests (the scripted server or the reading of reflector.go is wrong)")
	assert.Equal(t, []string{
		"Replace [a/p0@11 a/p1@12 a/p2@13] rv=13",
		"Add a/p3@14", "Update a/p0@15", "Delete a/p1@16",
		// Only the real store hears bookmarks: the initial-events-end one
		// goes to the temporary store.
		"Bookmark 17",
		"Replace [a/p0@15 a/p2@13 a/p3@14] rv=17",
		"Add a/p4@18",
		"Replace [a/p0@15 a/p2@13 a/p3@14 a/p4@18] rv=18",
		"Replace [a/p0@15 a/p2@13 a/p3@14 a/p4@18] rv=18",
		"Replace [a/p0@15 a/p2@13 a/p3@14 a/p4@18] rv=18",
		"Update a/p2@19",
		"Replace [a/p0@15 a/p2@19 a/p3@14 a/p4@18] rv=19",
	}, theirs.Store, "client-go's store calls")
}

// refusingScenario: a server whose WatchList is off answers every stream
// with 422 Invalid; it is turned on at the end.
var refusingScenario = scenario{
	prepare: func(s *scriptedServer) {
		seedPods(3)(s)
		s.refuseStreaming = true
	},
	steps: func(p *player) {
		p.check("fell back to LIST")
		p.create("p3")
		p.check("event")
		p.dropQuiet()
		p.check("quiet drop")
		p.expire()
		p.check("410: stream refused again, LIST at the last RV")
		p.refuseStreaming(false)
		p.update("p3")
		p.expire()
		p.check("the server streams now")
	},
}

func TestWatchListOracleServerRefusesStreaming(t *testing.T) {
	requireGateDefault(t)
	theirs := oracle(t, oracleConfig{}, refusingScenario)
	assert.Equal(t, []string{
		// The 422 ends watchList with an error: ListAndWatch falls back to
		// a LIST in the same cycle (no backoff, nothing reported).
		`WATCH rv="" ` + stream + ` → 422 Invalid`,
		`LIST rv="0" limit=500 → 3 items @13`,
		`WATCH rv="13" bookmarks timeout → 0 events replayed`,
		`WATCH rv="14" bookmarks timeout → 0 events replayed`,
		// Every new cycle tries the stream first again.
		`WATCH rv="14" ` + stream + ` → 422 Invalid`,
		// A LIST at a specific RV is not paged (watch-cache friendly).
		`LIST rv="14" → 4 items @14`,
		`WATCH rv="14" bookmarks timeout → 0 events replayed`,
		`WATCH rv="15" ` + stream + ` → 4 initial events, bookmark @15`,
	}, theirs.Requests, "client-go's requests")
}

// The stream ends before its initial-events-end bookmark.
func TestWatchListOracleStreamClosedBeforeBookmark(t *testing.T) {
	requireGateDefault(t)

	t.Run("after some events", func(t *testing.T) {
		// handleAnyWatch returns no error (events came): watchList loops
		// and streams again at once, from the same RV.
		theirs := oracle(t, oracleConfig{}, scenario{
			prepare: func(s *scriptedServer) { seedPods(3)(s); s.faults = []fault{cutNextStreamAfter(2)} },
			steps:   func(p *player) {},
		})
		assert.Equal(t, []string{
			`WATCH rv="" ` + stream + ` → 2 of 3 initial events, closed before the bookmark`,
			`WATCH rv="" ` + stream + ` → 3 initial events, bookmark @13`,
		}, theirs.Requests)
		assert.Equal(t, []string{"Replace [a/p0@11 a/p1@12 a/p2@13] rv=13"}, theirs.Store,
			"the cut stream's objects never reach the store")
	})

	t.Run("at once, with no events", func(t *testing.T) {
		// VeryShortWatchError: not retriable, not a 410, so watchList
		// returns it and ListAndWatch falls back to LIST.
		theirs := oracle(t, oracleConfig{}, scenario{
			prepare: func(s *scriptedServer) { seedPods(3)(s); s.faults = []fault{cutNextStreamAfter(0)} },
			steps:   func(p *player) {},
		})
		assert.Equal(t, []string{
			`WATCH rv="" ` + stream + ` → 0 of 3 initial events, closed before the bookmark`,
			`LIST rv="0" limit=500 → 3 items @13`,
			`WATCH rv="13" bookmarks timeout → 0 events replayed`,
		}, theirs.Requests)
	})

	t.Run("in later cycles", func(t *testing.T) {
		theirs := oracle(t, oracleConfig{}, closedLaterScenario)
		assert.Equal(t, []string{
			`WATCH rv="" ` + stream + ` → 3 initial events, bookmark @13`,
			`WATCH rv="14" ` + stream + ` → 1 of 4 initial events, closed before the bookmark`,
			`WATCH rv="14" ` + stream + ` → 4 initial events, bookmark @14`,
			`WATCH rv="14" ` + stream + ` → 0 of 4 initial events, closed before the bookmark`,
			`LIST rv="14" → 4 items @14`,
			`WATCH rv="14" bookmarks timeout → 0 events replayed`,
			// Held open two quiet seconds, then closed: no events but
			// not "very short", so no error: stream again.
			`WATCH rv="14" ` + stream + ` → held open, nothing sent`,
			`WATCH rv="14" ` + stream + ` → 4 initial events, bookmark @14`,
			// Held, then closed at once: very short, LIST.
			`WATCH rv="14" ` + stream + ` → held open, nothing sent`,
			`LIST rv="14" → 4 items @14`,
			`WATCH rv="14" bookmarks timeout → 0 events replayed`,
		}, theirs.Requests)
	})

	t.Run("with an error", func(t *testing.T) {
		theirs := oracle(t, oracleConfig{}, streamErrorsScenario)
		assert.Equal(t, []string{
			// 429 on the request: back off, stream again from the same RV.
			`WATCH rv="" ` + stream + ` → 429 TooManyRequests`,
			`WATCH rv="" ` + stream + ` → 3 initial events, bookmark @13`,
			// 429 as an ERROR event: the same.
			`WATCH rv="13" ` + stream + ` → ERROR event 429 TooManyRequests, closed`,
			`WATCH rv="13" ` + stream + ` → 3 initial events, bookmark @13`,
			// 500 as an ERROR event, or on the request: LIST.
			`WATCH rv="13" ` + stream + ` → ERROR event 500 InternalError, closed`,
			`LIST rv="13" → 3 items @13`,
			`WATCH rv="13" bookmarks timeout → 0 events replayed`,
			`WATCH rv="13" ` + stream + ` → 500 InternalError`,
			`LIST rv="13" → 3 items @13`,
			`WATCH rv="13" bookmarks timeout → 0 events replayed`,
		}, theirs.Requests)
	})
}

var closedLaterScenario = scenario{
	prepare: seedPods(3),
	steps: func(p *player) {
		p.check("streamed")
		p.create("p3")
		p.next(cutNextStreamAfter(1))
		p.expire()
		p.check("cut after 1 event: stream again")
		p.next(cutNextStreamAfter(0))
		p.expire()
		p.check("cut at once: LIST")
		p.next(holdNextStream())
		p.expire()
		p.dropQuiet()
		p.check("held, closed after 2 quiet seconds: stream again")
		p.next(holdNextStream())
		p.expire()
		p.dropNow()
		p.check("held, closed at once: LIST")
	},
}

var streamErrorsScenario = scenario{
	prepare: func(s *scriptedServer) {
		seedPods(3)(s)
		s.faults = []fault{failNextWith("stream", tooManyRequests())}
	},
	steps: func(p *player) {
		p.check("429 on the stream request")
		p.next(errorEventOnNext("stream", tooManyRequests()))
		p.expire()
		p.check("429 as the stream's ERROR event")
		p.next(errorEventOnNext("stream", internalError()))
		p.expire()
		p.check("500 as the stream's ERROR event")
		p.next(failNextWith("stream", internalError()))
		p.expire()
		p.check("500 on the stream request")
	},
}

var optOutScenario = scenario{
	prepare: seedPods(3),
	steps: func(p *player) {
		p.check("synced")
		p.create("p3")
		p.expire()
		p.check("after a 410")
	},
}

// A ListerWatcher may say it cannot stream (IsWatchListSemanticsUnSupported,
// checked once, in NewReflectorWithOptions); one that says it can streams.
func TestWatchListOracleListerWatcherOptsOut(t *testing.T) {
	requireGateDefault(t)
	yes, no := true, false
	t.Run("unsupported", func(t *testing.T) {
		theirs := oracle(t, oracleConfig{optOut: &yes}, optOutScenario)
		assert.Equal(t, []string{
			`LIST rv="0" limit=500 → 3 items @13`,
			`WATCH rv="13" bookmarks timeout → 0 events replayed`,
			`LIST rv="14" → 4 items @14`,
			`WATCH rv="14" bookmarks timeout → 0 events replayed`,
		}, theirs.Requests)
	})
	t.Run("supported", func(t *testing.T) {
		theirs := oracle(t, oracleConfig{optOut: &no}, optOutScenario)
		assert.Equal(t, []string{
			`WATCH rv="" ` + stream + ` → 3 initial events, bookmark @13`,
			`WATCH rv="14" ` + stream + ` → 4 initial events, bookmark @14`,
		}, theirs.Requests)
	})
}

// client-go's temporary store applies the store's transformer (a
// TransformingStore's), so a streamed Replace hands over transformed
// objects; a LIST's Replace and watch events hand over the raw ones.
func TestWatchListOracleTransformingStore(t *testing.T) {
	requireGateDefault(t)
	t.Run("stream", func(t *testing.T) {
		theirs := oracle(t, oracleConfig{transform: true}, optOutScenario)
		assert.Equal(t, []string{
			"Replace [a/p0@11* a/p1@12* a/p2@13*] rv=13",
			"Add a/p3@14",
			"Replace [a/p0@11* a/p1@12* a/p2@13* a/p3@14*] rv=14",
		}, theirs.Store)
	})
	t.Run("LIST", func(t *testing.T) {
		theirs := oracle(t, oracleConfig{transform: true}, scenario{
			prepare: func(s *scriptedServer) { seedPods(3)(s); s.refuseStreaming = true },
			steps:   optOutScenario.steps,
		})
		assert.Equal(t, []string{
			"Replace [a/p0@11 a/p1@12 a/p2@13] rv=13",
			"Add a/p3@14",
			"Replace [a/p0@11 a/p1@12 a/p2@13 a/p3@14] rv=14",
		}, theirs.Store)
	})
}

// scriptStep is one step of a random or fuzzed script, chosen by op, with
// arg picking the pod or the fault's detail. Every step ends in a
// checkpoint.
func scriptStep(p *player, i int, op, arg byte) {
	name := fmt.Sprint("p", arg%6)
	switch op % 18 {
	case 0, 1, 2, 3, 4, 5:
		switch {
		case !p.s.exists(name):
			p.create(name)
		case arg&0x80 == 0:
			p.update(name)
		default:
			p.remove(name)
		}
	case 6:
		p.bookmarkAhead()
	case 7:
		p.dropQuiet()
	case 8:
		p.dropNow()
	case 9:
		p.expire()
	case 10:
		p.next(cutNextStreamAfter(int(arg % 4)))
	case 11:
		p.next(holdNextStream())
	case 12:
		p.next(failNextWith("stream", expired()))
	case 13:
		p.next(errorEventOnNext("stream", expired()))
	case 14:
		p.next(failNextWith("stream", tooManyRequests()))
	case 15:
		p.refuseStreaming(arg%2 == 0)
	case 16:
		p.next(failNextWith("watch", expired()))
	case 17:
		p.next(errorEventOnNext("stream", internalError()))
	}
	p.check(fmt.Sprintf("step %d (op %d)", i, op%18))
}

// randomScenario: n steps from a fixed PCG seed.
func randomScenario(seed uint64, n int) scenario {
	return scenario{
		prepare: seedPods(3),
		steps: func(p *player) {
			r := rand.New(rand.NewPCG(seed, 0))
			for i := range n {
				scriptStep(p, i, byte(r.IntN(256)), byte(r.IntN(256)))
			}
		},
	}
}

// fuzzScenario decodes data as (op, arg) pairs, at most maxFuzzSteps.
const maxFuzzSteps = 40

func fuzzScenario(data []byte) scenario {
	return scenario{
		prepare: seedPods(3),
		steps: func(p *player) {
			for i := 0; i+1 < len(data) && i/2 < maxFuzzSteps; i += 2 {
				scriptStep(p, i/2, data[i], data[i+1])
			}
		},
	}
}

func TestWatchListOracleRandomised(t *testing.T) {
	requireGateDefault(t)
	sc := randomScenario(4, 120)
	theirs := oracle(t, oracleConfig{}, sc)
	// The scripted server is deterministic: the same script, the same
	// transcript. (Without this, a difference could be the harness's.)
	again := play(t, clientGoReflector, oracleConfig{}, sc)
	require.Equal(t, theirs, again, "client-go's transcript changed between two runs of one script")
	// The seed must reach the paths this oracle is about.
	for _, want := range []string{
		"sendInitialEvents=true", "initial events, bookmark", "0 of", "1 of", "held open", "422 Invalid",
		"ERROR event 410", "→ 410 Expired", "429 TooManyRequests", "500 InternalError", "LIST ",
	} {
		assert.True(t, anyContains(theirs.Requests, want), "seed 4 never produced a request answered %q", want)
	}
}

func anyContains(lines []string, sub string) bool {
	for _, l := range lines {
		if contains(l, sub) {
			return true
		}
	}
	return false
}

// With client-go's WatchListClient gate off, and ours told to list first,
// both take the classic path through the same scripts.
func TestWatchListOracleGateOff(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	t.Run("streaming server", func(t *testing.T) {
		theirs := oracle(t, oracleConfig{gateOff: true}, streamingScenario)
		assert.Equal(t, []string{
			`LIST rv="0" limit=500 → 3 items @13`,
			`WATCH rv="13" bookmarks timeout → 0 events replayed`,
			`WATCH rv="17" bookmarks timeout → 0 events replayed`,
			// Very short watch: the cycle ends; LIST at the last RV.
			`LIST rv="17" → 3 items @17`,
			`WATCH rv="17" bookmarks timeout → 0 events replayed`,
			// 410 ERROR event: LIST at the last RV (not ""), unpaged.
			`LIST rv="18" → 4 items @18`,
			`WATCH rv="18" bookmarks timeout → 0 events replayed`,
			`LIST rv="18" → 4 items @18`,
			`WATCH rv="18" bookmarks timeout → 0 events replayed`,
			`LIST rv="18" → 4 items @18`,
			`WATCH rv="18" bookmarks timeout → 0 events replayed`,
			`WATCH rv="19" bookmarks timeout → 410 Expired`,
			`LIST rv="19" → 4 items @19`,
			`WATCH rv="19" bookmarks timeout → 0 events replayed`,
		}, theirs.Requests)
	})
	t.Run("refusing server", func(t *testing.T) { oracle(t, oracleConfig{gateOff: true}, refusingScenario) })
	t.Run("streams closed early", func(t *testing.T) { oracle(t, oracleConfig{gateOff: true}, closedLaterScenario) })
	t.Run("stream errors", func(t *testing.T) { oracle(t, oracleConfig{gateOff: true}, streamErrorsScenario) })
	t.Run("opted in", func(t *testing.T) {
		no := false
		oracle(t, oracleConfig{gateOff: true, optOut: &no}, optOutScenario)
	})
	t.Run("randomised", func(t *testing.T) {
		theirs := oracle(t, oracleConfig{gateOff: true}, randomScenario(4, 120))
		assert.False(t, anyContains(theirs.Requests, "sendInitialEvents"), "client-go streamed with its gate off")
	})
}

// FuzzWatchListSameAsClientGo: any script of writes, drops, 410s, bookmarks
// and stream faults gives the same transcript on both reflectors. Each input
// is cut to maxFuzzSteps steps; time is fake, so a run takes milliseconds.
func FuzzWatchListSameAsClientGo(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 9, 0, 1, 3})
	f.Add([]byte{10, 2, 9, 0, 0, 4, 11, 0, 9, 0, 7, 0})
	f.Add([]byte{15, 0, 0, 1, 9, 0, 15, 1, 9, 0, 8, 0})
	f.Add([]byte{12, 0, 13, 0, 14, 0, 9, 0, 16, 0, 7, 0, 17, 0, 9, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		requireGateDefault(t)
		oracle(t, oracleConfig{}, fuzzScenario(data))
	})
}

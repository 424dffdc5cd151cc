package testutil

// OracleSteps is how many random steps (operations, or sequences) an
// oracle test runs: full in a plain test binary, a tenth (at least one)
// under the race detector.
//
// Why a tenth: an oracle drives ours and client-go's with the same random
// steps, nearly all of them in the test's one goroutine, and compares
// what comes out. The race detector makes each step five to ten times
// slower and finds nothing in a single goroutine's sequence that a tenth
// of it would not show too, so at full size under -race the chapters'
// oracles alone were about ninety of hack/test.sh's CPU seconds. The full
// size still runs in every hack/test.sh: its pass without -race runs the
// oracles (the tests named Oracle, Differential or MatchesClientGo), and
// plain `go test ./...` runs them at full size too.
//
// Ours: a test helper.
func OracleSteps(full int) int {
	if Race {
		return max(full/10, 1)
	}
	return full
}

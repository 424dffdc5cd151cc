#!/usr/bin/env bash
# The project's one test command: the README names it and .ci/run calls it.
#
# It runs three lanes at once, each a chain of steps, and stops at the first
# failure with a non-zero exit code:
#
#  cluster   1. gofmt, go vet and staticcheck (with and without the e2e,
#               browser and workshop build tags), here and in the nested
#               modules examples/controller-runtime and dropin/crqueue;
#            2. a real kube-apiserver + etcd on loopback, which
#               hack/local-cluster.sh builds (first time: several minutes),
#               starts, and stops again when this script exits; the e2e
#               tests against it, and the nested modules' tests;
#            3. the live view in headless Chromium (test/browser, build tag
#               browser), on the embedded server and on that cluster (the
#               demo's page, and the page examples/controller-runtime
#               serves, which the test builds and runs); hack/chromium.sh
#               installs Debian's chromium when missing.
#  unit      every unit, oracle and example test of this module, with the
#            race detector.
#  workshop  the workshop's selfcheck (cmd/workshop): every stub fails its
#            checker, every solution passes it; then, without -race, the
#            oracles at full size and the soak's contract runs
#            (INFORMER_ANATOMY_SOAK=1).
#
# Then, alone, the rest of the soak (the bursts), without -race.
#
# Why lanes: one after another, the steps took 8m50s on two quiet cores and
# left the second core idle for long stretches: the e2e and browser tests
# wait on a server and a browser, cmd/workshop's tests (then the race
# run's last two minutes) on one go command at a time.
# Each lane's output goes to a file and is printed whole when the lane
# ends, a failing lane's first; the others are then stopped. Ctrl-C stops
# every lane and the cluster. Without setsid(1) (not Linux) the lanes run
# one after another.
#
#   hack/test.sh               all three lanes, then the soak
#   hack/test.sh --lane NAME   one lane alone, its output as it comes
set -euo pipefail
cd "$(dirname "$0")/.."
self=$PWD/hack/test.sh

lane_cluster() {
  # This lane starts the cluster; whatever happens, it stops it.
  trap './hack/local-cluster.sh down >/dev/null 2>&1 || true' EXIT

  echo "== gofmt"
  local unformatted
  unformatted=$(gofmt -l chapters cmd demo dropin examples internal liveprobe hack test workshop 2>/dev/null || true)
  if [ -n "$unformatted" ]; then
    echo "gofmt would change these files (run: gofmt -w .):"
    echo "$unformatted"
    return 1
  fi

  echo "== go vet"
  go vet ./...
  go vet -tags e2e ./test/...
  go vet -tags browser ./test/...
  # The workshop's checkers build only with the workshop tag (so that the
  # unsolved exercises stay green under go test ./...).
  go vet -tags workshop ./workshop/...
  # examples/controller-runtime is a module of its own (controller-runtime
  # stays out of this module's graph): vetted and tested from its directory.
  (cd examples/controller-runtime && go vet ./... && go vet -tags e2e ./...)
  # dropin/crqueue (the traced controller-runtime priority queue) is one too.
  (cd dropin/crqueue && go vet ./...)

  # staticcheck, pinned (from the Go module proxy, built once into the build
  # cache). Deliberate exceptions are //lint: comments that say why, and
  # workshop/exercises/staticcheck.conf (the stubs' empty answers).
  echo "== staticcheck"
  local staticcheck="go run honnef.co/go/tools/cmd/staticcheck@v0.8.2"
  $staticcheck ./...
  $staticcheck -tags e2e ./test/...
  $staticcheck -tags browser ./test/...
  $staticcheck -tags workshop ./workshop/...
  (cd examples/controller-runtime && $staticcheck ./... && $staticcheck -tags e2e ./...)
  (cd dropin/crqueue && $staticcheck ./...)

  echo "== e2e against a real kube-apiserver (hack/local-cluster.sh)"
  ./hack/local-cluster.sh up >/dev/null
  eval "$(./hack/local-cluster.sh env)"
  # -vet=off here and below: go vet ./... above ran every check go test's
  # own vet pass would.
  go test -race -vet=off -count=1 -tags e2e ./test/e2e
  # The nested modules' tests, e2e and unit, under -race: here rather than
  # in the unit lane, which ends last.
  (cd examples/controller-runtime && go test -race -vet=off -count=1 -tags e2e ./...)
  (cd dropin/crqueue && go test -race -vet=off -count=1 ./...)

  # Without -race: what this test exercises runs in other processes (the
  # demo and the browser); the race detector would only slow the build of
  # chromedp.
  echo "== the live view in headless Chromium (hack/chromium.sh)"
  INFORMER_ANATOMY_CHROMIUM=$(./hack/chromium.sh path)
  export INFORMER_ANATOMY_CHROMIUM
  # TestLiveViewAtScaleInChromium and TestDemoPageAtScaleInChromium at
  # 30,000 objects (about 20 s each here); their 150,000 (about a minute
  # each) is the manual run docs/07-your-controller.md and docs/tracing.md
  # record.
  INFORMER_ANATOMY_BROWSER_OBJECTS=${INFORMER_ANATOMY_BROWSER_OBJECTS:-30000} \
    go test -vet=off -count=1 -tags browser ./test/browser
}

lane_unit() {
  # The long soak runs (cmd/trace-demo's 100,000-event live-view load test,
  # twenty default runs and four --queue deltafifo runs of the whole lesson
  # script, a 20,000-event burst against a stalled OTLP collector, the live
  # page's largest burst with its most handlers in demo/livecontrols) run at
  # a small size here, and once at full size in the workshop lane (the
# contract runs) and after the lanes (the bursts). The
  # slowest packages (cmd/workshop, which builds and runs checkers in
  # temporary courses, and cmd/trace-demo) take 1-3 minutes each here on
  # two quiet cores, several times that on cores shared with other work:
  # go test's default 10-minute limit per package is too close.
  echo "== go test -race ./..."
  go test -race -vet=off -count=1 -timeout 30m ./...
}

lane_workshop() {
  # The selfcheck proves the course in a temporary copy: every stub fails
  # its checker, every solution passes it (go vet -tags workshop is in the
  # cluster lane's vet step).
  echo "== workshop selfcheck"
  go run ./cmd/workshop selfcheck

  # The oracles at full size, without -race: under it (the unit lane) they
  # run a tenth of their steps (testutil.OracleSteps).
  echo "== without -race: the oracles at full size"
  go test -vet=off -count=1 -run 'Oracle|Differential|MatchesClientGo|MatchClientGo' ./chapters/... ./dropin

  # The soak's contract runs: twenty default runs and four --queue
  # deltafifo runs of the whole lesson script, each held to the span
  # contract. The lessons are deterministic by construction, so another
  # lane's load only slows them; they run here rather than in the soak
  # after the lanes, which this lane ends long before.
  echo "== soak: the contract runs (INFORMER_ANATOMY_SOAK=1)"
  INFORMER_ANATOMY_SOAK=1 go test -vet=off -count=1 \
    -run 'TestDefaultRunsKeepTheContract|TestDeltaFIFORunsKeepTheContract' ./cmd/trace-demo
}

# soak runs the soak's bursts once, without -race, after the lanes and
# alone: what they look for (a count lost, a bound passed, a heap that grows
# with the events) is not a data race, and the race detector would only slow them (about 3 minutes for the
# live-view load test alone under -race on two cores). Alone, because the
# load test writes 25,000 events at a time as fast as the embedded server
# takes them, and an informer sharing its two cores with another lane's
# tests can fall the server's 4096-event watch buffer behind (the test then
# fails, saying the machine is too loaded).
soak() {
  echo "== soak: the bursts (INFORMER_ANATOMY_SOAK=1)"
  # -p 1: the two packages' bursts one after the other, for the same reason.
  INFORMER_ANATOMY_SOAK=1 go test -p 1 -vet=off -count=1 \
    -run 'TestLiveViewUnder100kEventsDropsNothingAndStaysBounded|TestStalledCollectorNeverStallsTheInformer|TestMostHandlersAndLargestBurstStayBounded' \
    ./cmd/trace-demo ./demo/livecontrols
}

lanes=(cluster unit workshop)

if [ "${1:-}" = "--lane" ]; then
  case "${2:-}" in
    cluster | unit | workshop) "lane_$2"; exit ;;
    *) echo "usage: $0 [--lane cluster|unit|workshop]" >&2; exit 2 ;;
  esac
fi
[ $# -eq 0 ] || { echo "usage: $0 [--lane cluster|unit|workshop]" >&2; exit 2; }

if ! command -v setsid >/dev/null; then
  for l in "${lanes[@]}"; do "$self" --lane "$l"; done
  soak
  exit
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/informer-anatomy-test.XXXXXX")
start=$SECONDS

# stop_lanes ends every lane still running, each a session of its own
# (setsid), so that its go commands, test binaries and browser end with it.
stop_lanes() {
  local l
  for l in "${lanes[@]}"; do
    if [ -f "$logs/$l.pid" ] && [ ! -f "$logs/$l.rc" ]; then
      kill -TERM -- "-$(cat "$logs/$l.pid")" 2>/dev/null || true
    fi
  done
}
trap 'stop_lanes; ./hack/local-cluster.sh down >/dev/null 2>&1 || true; rm -rf "$logs"' EXIT
trap 'echo; echo "hack/test.sh: interrupted: stopping every lane" >&2; exit 130' INT TERM

for l in "${lanes[@]}"; do
  # The lane records its own pid: setsid makes it the id of the lane's
  # process group, which stop_lanes signals.
  (
    if setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$logs/$l.pid" "$self" --lane "$l" >"$logs/$l.log" 2>&1; then
      echo 0 >"$logs/$l.rc"
    else
      echo $? >"$logs/$l.rc"
    fi
  ) &
done
echo "hack/test.sh: lanes ${lanes[*]} started (output in $logs, printed as each ends)"

# step prints the step a running lane is in: its log's last "== " line.
step() { grep '^== ' "$logs/$1.log" 2>/dev/null | tail -1 | cut -c4- || true; }

left=("${lanes[@]}")
last_note=$SECONDS
while [ ${#left[@]} -gt 0 ]; do
  sleep 1
  still=()
  for l in "${left[@]}"; do
    if [ ! -f "$logs/$l.rc" ]; then
      still+=("$l")
      continue
    fi
    rc=$(cat "$logs/$l.rc")
    echo
    echo "===== lane $l ($((SECONDS - start))s) ====="
    cat "$logs/$l.log"
    if [ "$rc" != 0 ]; then
      echo "===== lane $l FAILED (exit $rc); stopping the others" >&2
      exit 1
    fi
  done
  left=("${still[@]}")
  if [ ${#left[@]} -gt 0 ] && [ $((SECONDS - last_note)) -ge 60 ]; then
    last_note=$SECONDS
    notes=()
    for l in "${left[@]}"; do notes+=("$l: $(step "$l")"); done
    echo "hack/test.sh: $((SECONDS - start))s, running: $(IFS=';'; echo "${notes[*]}")"
  fi
done
echo
echo "hack/test.sh: every lane passed in $((SECONDS - start))s"
soak
echo "hack/test.sh: passed in $((SECONDS - start))s"

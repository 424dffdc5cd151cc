#!/usr/bin/env bash
# Runs the side-by-side benchmarks (ours vs client-go) and prints the ratio
# table that docs/performance.md keeps.
#
#   hack/bench.sh [ROUNDS] [PACKAGE...]
#
# Each round runs every benchmark once, ours then client-go's, so the two are
# measured seconds apart under the same machine load; medians are taken over
# the rounds. (go test -count N would run all of ours, then all of theirs, and
# a drift in machine load between the two halves shows up as a false ratio.)
#
# Environment:
#   BENCH=regexp      which benchmarks to run (go test -bench; default: all),
#                     e.g. 'SharedInformer/handlers=1/^(ours|ours-traced-one-key)$'
#   BENCHTIME=200ms   go test -benchtime per benchmark and round
#   BENCHVS=a=b,...   also compare two of our variants, a ÷ b, with per-round
#                     paired ratios (hack/benchtable -vs), e.g.
#                     BENCHVS=ours-traced-one-key=ours or with-liveview=traced
#   BENCHOUT=file     keep the raw go test output there
#
#   hack/bench.sh scale [quick]
#
# runs test/scale's BenchmarkScale instead (docs/performance.md, "At the
# scale of a cluster"): client-go's informer and ours on 150,000 pods, both
# first-request paths, and prints its tables. quick: 10,000 pods and 10,000
# updates. SCALE_PODS, SCALE_UPDATES and SCALE_ROUNDS (default 1; the order
# of the two libraries swaps every round) size it; SCALE_PROFILE_DIR (an
# absolute path) keeps each pass's steady-state CPU profile; it runs under nice, and
# prints the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = scale ]; then
  if [ "${2:-}" = quick ]; then
    export SCALE_PODS=${SCALE_PODS:-10000} SCALE_UPDATES=${SCALE_UPDATES:-10000}
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  go test -c -o "$tmp/scale.test" ./test/scale
  echo "load before: $(uptime)"
  (cd test/scale && nice "$tmp/scale.test" -test.run '^$' -test.bench Scale -test.benchtime 1x -test.v -test.timeout 0) > "$tmp/out.txt"
  echo "load after:  $(uptime)"
  [ -z "${BENCHOUT:-}" ] || cp "$tmp/out.txt" "$BENCHOUT"
  grep -E '^(goos|goarch|cpu):' "$tmp/out.txt" | sort -u
  # The tables are the benchmark's log lines (indented by go test).
  sed -n 's/^        \(|\|watch-list\|paged-list\)/\1/p' "$tmp/out.txt"
  exit 0
fi
rounds=${1:-8}
shift || true
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./chapters/01-store)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pkg in "${pkgs[@]}"; do
  bin="$tmp/$(basename "$pkg").test"
  go test -c -o "$bin" "$pkg"
  for _ in $(seq "$rounds"); do
    (cd "$pkg" && "$bin" -test.run '^$' -test.bench "${BENCH:-.}" -test.benchtime="${BENCHTIME:-200ms}" -test.benchmem) >> "$tmp/out.txt"
  done
done
[ -z "${BENCHOUT:-}" ] || cp "$tmp/out.txt" "$BENCHOUT"
grep -E '^(goos|goarch|cpu):' "$tmp/out.txt" | sort -u
echo
go run ./hack/benchtable -vs "${BENCHVS:-}" < "$tmp/out.txt"

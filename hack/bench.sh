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
set -euo pipefail
cd "$(dirname "$0")/.."
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

#!/usr/bin/env bash
# The project's one test command: the README names it and .ci/run calls it.
# It fails (non-zero) on the first problem: unformatted code, a vet finding,
# or a failing test.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l chapters cmd internal hack 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change these files (run: gofmt -w .):"
  echo "$unformatted"
  exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 ./...

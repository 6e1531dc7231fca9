#!/usr/bin/env bash
# Build dsse-verify (the independent DSSE/in-toto verifier of faultkit's bundles) from the pinned Go
# modules into a cache outside the repository, keyed by its sources, and print the binary's path.
# A second run with the same sources builds nothing. .ci/run and tests/release/test_dsse_independent.py
# call it; modules come through the Go module proxy (GOFLAGS=-mod=mod, go.sum checks them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v go >/dev/null || { echo "Error: dsse-verify: no Go toolchain on PATH" >&2; exit 1; }
key="$(cd "$here" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)"
bin="${XDG_CACHE_HOME:-$HOME/.cache}/faultkit-dsse-verify/$key/dsse-verify"
if [ ! -x "$bin" ]; then
  mkdir -p "$(dirname "$bin")"
  tmp="$bin.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  (cd "$here" && GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 \
    go build -trimpath -o "$tmp" .)
  mv -f "$tmp" "$bin"  # whole or not at all: two builds at once each write their own temporary file
fi
echo "$bin"

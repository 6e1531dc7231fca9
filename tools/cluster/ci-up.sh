#!/usr/bin/env bash
# CI: install what the cluster needs, build it (nothing when the cache holds this version) and
# start it; scripts/test.sh's EXIT trap runs `cluster down`, also when a step or a test fails.
# With --build-only it installs and builds, and starts nothing (scripts/test.sh builds while the
# fast tier of the tests runs, and starts the cluster after).
set -euo pipefail
build_only=0
[ "${1:-}" = --build-only ] && build_only=1
here="$(cd "$(dirname "$0")" && pwd)"

missing=()
command -v runc >/dev/null || missing+=(runc)
command -v iptables >/dev/null || missing+=(iptables)
command -v conntrack >/dev/null || missing+=(conntrack)
command -v ip >/dev/null || missing+=(iproute2)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
command -v dockerd >/dev/null || missing+=(docker.io)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# tests/cluster builds its test image with the Docker engine (never the cluster's runtime); scripts/test.sh
# starts the engine (scripts/ci/dockerd.sh) before this script.
[ "$build_only" = 1 ] || docker info >/dev/null 2>&1 || echo "ci-up: warning: no Docker engine answers; tests/cluster will fail" >&2

command -v go >/dev/null || { echo "Error: ci-up: no Go toolchain on PATH; the cluster is built from Go modules" >&2; exit 1; }
"$here/cluster" build
[ "$build_only" = 1 ] && exit 0
# A cluster left half-up by an earlier run is taken down first; a healthy one is used as it is.
"$here/cluster" status >/dev/null 2>&1 || "$here/cluster" down
"$here/cluster" up
"$here/cluster" status

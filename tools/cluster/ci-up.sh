#!/usr/bin/env bash
# CI: install what the cluster needs, build it (nothing when the cache holds this version) and
# start it; .ci/run's EXIT trap runs `cluster down`, also when a step or a test fails.
set -euo pipefail
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
# tests/cluster builds its test image with the Docker engine (never the cluster's runtime); .ci/run
# starts the engine (scripts/ci/dockerd.sh) before this script.
docker info >/dev/null 2>&1 || echo "ci-up: warning: no Docker engine answers; tests/cluster will fail" >&2

command -v go >/dev/null || { echo "Error: ci-up: no Go toolchain on PATH; the cluster is built from Go modules" >&2; exit 1; }
"$here/cluster" build
# A cluster left half-up by an earlier run is taken down first; a healthy one is used as it is.
"$here/cluster" status >/dev/null 2>&1 || "$here/cluster" down
"$here/cluster" up
"$here/cluster" status

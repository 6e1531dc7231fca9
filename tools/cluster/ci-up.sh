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
# tests/cluster builds its test image with the Docker engine (never the cluster's runtime).
if ! docker info >/dev/null 2>&1; then
  dockerd >/tmp/dockerd.log 2>&1 &
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi

"$here/cluster" build
"$here/cluster" up
"$here/cluster" status

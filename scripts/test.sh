#!/usr/bin/env bash
# Set up everything the tests need on a bare machine, run them, and stop what this script started.
#
#   bash scripts/test.sh           # the whole suite, as CI runs it (.ci/run calls this)
#   bash scripts/test.sh --fast    # the fast tier only: tests that start nothing (pytest -m "not live")
#
# Extra arguments go to both pytest runs (for example -x or -k NAME).
#
# The whole suite runs in two tiers. The fast tier (no application, cluster, engine or stack) runs
# while the one-node cluster and the Go tools build in the background: on a cold machine that
# build is the longest step of the set-up, and the fast tier needs none of it. The live tier (real
# minishop processes, telemetry stacks, the Docker engine, the one-node cluster) runs once the build
# is done: its verdicts measure the machine, so nothing is built while it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1

fast=0
if [ "${1:-}" = --fast ]; then fast=1; shift; fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}"
logs="$(mktemp -d)"

# Debian packages: git (patches are applied with `git apply`), Chromium (the HTML report is rendered
# in it); for the live tier also the Docker engine and debootstrap (tests/images builds real images
# from Debian packages), iptables and nft (the kubernetes actions read a pod's netns), Prometheus
# (the kubernetes platform's --prometheus tests and tools/telemetry run Debian's on loopback).
missing=()
need() { command -v "$1" >/dev/null || missing+=("$2"); }
need git git
need chromium chromium
need promtool prometheus  # the alert packs' checks and unit tests (tests/apps/test_alert_pack.py)
if [ "$fast" = 0 ]; then
  need dockerd docker.io
  need debootstrap debootstrap
  need iptables-save iptables
  need nft nftables
  need mvn maven  # tests/images/test_jib_build.py builds a Maven project with Jib
fi
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
python3 -m pip install -q -e ".[test,plot,docker,kubernetes]"

# The fast tier on two workers per core: about a third of its time is tests on the fake platform
# waiting out windows in real time, which leave a core free (on 2 cores: 184 s, against 211 s on two).
fast_workers=$(( $(nproc) * 2 ))
if [ "$fast" = 1 ]; then
  exec python3 -m pytest -q -m "not live" -n "$fast_workers" "$@"
fi

# Whatever happens after this line, the EXIT trap stops what this script started: a build still
# running, the cluster (it runs images the engine built), then the Docker engine (only if started here).
builder=""
stop_all() {
  [ -n "$builder" ] && kill -- -"$builder" 2>/dev/null || true
  tools/cluster/cluster down || true
  scripts/ci/dockerd.sh stop || true
}
trap stop_all EXIT

# The Go tools, each built once into a cache outside the repository: the one-node Kubernetes of
# tools/cluster (tests/cluster and the kubernetes platform run on it), a `distribution` registry
# for the push test (tests/images/test_image_push.py starts it on loopback), and Jaeger v2 for the
# telemetry stack of tools/telemetry (tests/telemetry start and stop the stack themselves).
export REGISTRY_BIN="$cache/faultkit-registry/bin/registry"
build_tools() {
  bash tools/cluster/ci-up.sh --build-only
  [ -x "$REGISTRY_BIN" ] || GOBIN="$(dirname "$REGISTRY_BIN")" GOFLAGS=-mod=mod \
    go install github.com/distribution/distribution/v3/cmd/registry@v3.0.0
  tools/telemetry/telemetry build
}
set -m  # the build gets a process group of its own, so the trap can stop all of it
build_tools >"$logs/build.log" 2>&1 &
builder=$!
set +m

# dsse-verify, the independent verifier of bundle attestations (tests/release/test_dsse_independent.py,
# fast tier): built from its pinned Go modules into a cache outside the repository, keyed by its
# sources, beside the background build and before the fast tier that uses it (cold: about a minute;
# cached: nothing). A plain assignment, so a failed build stops the run here. Under --fast the test
# builds it itself.
DSSE_VERIFY_BIN="$(bash tools/dsse-verify/build.sh)"
export DSSE_VERIFY_BIN

status=0
# A run of pytest whose failure fails the script at its end, after the other phases ran; no test
# collected in a phase is not a failure.
tier() {
  local rc=0
  python3 -m pytest -q "$@" || rc=$?
  [ "$rc" = 5 ] && rc=0
  [ "$status" = 0 ] && status=$rc
  return 0
}

tier -m "not live" -n "$fast_workers" "$@"

echo "test.sh: waiting for the cluster and tool builds (log: $logs/build.log)"
if ! wait "$builder"; then
  builder=""
  tail -n 30 "$logs/build.log" >&2
  echo "Error: test.sh: building the cluster or the Go tools failed; see above" >&2
  exit 1
fi
builder=""
tail -n 3 "$logs/build.log"
# Cached by now, so this prints the path at once; the live tier's tests/telemetry start Jaeger from it.
FAULTKIT_TELEMETRY_JAEGER="$(tools/telemetry/telemetry build)"
export FAULTKIT_TELEMETRY_JAEGER

# The live tier in two phases. First the tests that start their own minishop or telemetry stack on
# free ports, three at a time, a module to a worker: they mostly wait on their windows (three workers
# kept the machine about 60% busy, and no test's own time grew by more than a tenth; four pushed the
# load average past 8 per core in one CI run, and two validations measured the machine three times).
# The cluster and the engine are not started yet, so nothing of theirs competes with these windows.
tier -m "live and not exclusive" -n 3 --dist loadscope --durations=40 "$@"

# Then the exclusive ones, on the machine's one cluster and Docker engine: first, one at a time, those
# that nothing may run beside (the cluster taken down and up, the node loaded, the engine read whole:
# marked alone); then the rest on two workers, a module to a worker (tests/conftest.py), with the
# modules that bring up several namespaces at once in one group, which starts first. (Tried on two workers before this
# grouping, with local minishop's tests beside the cluster's, rollouts on the cluster timed out.)
scripts/ci/dockerd.sh start
bash tools/cluster/ci-up.sh
tier -m "live and exclusive and alone" --durations=20 "$@"
tier -m "live and exclusive and not alone" -n 2 --dist loadgroup --no-loadscope-reorder --durations=40 "$@"
exit "$status"

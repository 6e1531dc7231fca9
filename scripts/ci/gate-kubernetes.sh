#!/usr/bin/env bash
# The catalog gate on a real cluster: validate the faults a pull request adds or changes.
#
#   FAULTKIT_GATE_BASE=origin/main scripts/ci/gate-kubernetes.sh
#
# Takes the cluster as given: KUBECONFIG (or ~/.kube/config) points at it, and
# FAULTKIT_KUBERNETES_LOAD is the command that hands built images to its nodes, run as
# `COMMAND IMAGE...` (`kind load docker-image` on a runner with kind; `tools/cluster/cluster load` for
# this repository's one-node cluster); without it the nodes must pull the tags themselves.
#
# Steps: lint the changed entries (`faultkit gate`, no cluster needed); when there are any, bring
# the app up on the kubernetes platform (`faultkit up` builds the images and loads them), run
# `faultkit gate --validate --platform kubernetes` with the JUnit report and GitHub annotations,
# and take the app down again whatever happened. Exits with the gate's code: 0 when every changed
# entry passed, 1 when one was rejected, anything else for an error of the platform.
#
# Settings (environment):
#   FAULTKIT_GATE_BASE       what the pull request is compared against (required)
#   FAULTKIT_GATE_APP        the app the changed faults belong to (default minishop)
#   FAULTKIT_GATE_NAMESPACE  the namespace faultkit creates for it (default review-<app>: the agent under test
#                            can read every name, so none may carry a giveaway word, faultkit's own included)
#   FAULTKIT_GATE_ACCEPT_PRIVILEGED  `true` or `1`: a maintainer accepted the privileged changes
#                            (the workflow sets it from the pull request's label; gate --accept-privileged)
#   FAULTKIT_GATE_WINDOW     observation window (default 20s); FAULTKIT_GATE_REPEAT injections (default 2)
#   FAULTKIT_GATE_STABILITY  the second verdict's window, `same` (default) or `none` for a single run
#   FAULTKIT_GATE_JUNIT      JUnit file (default faultkit-gate.xml)
#   FAULTKIT_GATE_ROLLOUT_TIMEOUT seconds a change's rollout may take (default 60)
#   FAULTKIT_GATE_MAX_LOAD   load average per core above which a cycle is an error to retry (default: validate's)
#   FAULTKIT_GATE_UP_TIMEOUT seconds for every Deployment to become available (default 300)
#   FAULTKIT                 the faultkit command (default `faultkit`; e.g. `python3 -m faultkit.cli`)
set -euo pipefail

base=${FAULTKIT_GATE_BASE:?"Error: gate-kubernetes.sh: FAULTKIT_GATE_BASE is not set; set it to the pull request's base, e.g. origin/main"}
app=${FAULTKIT_GATE_APP:-minishop}
namespace=${FAULTKIT_GATE_NAMESPACE:-review-$app}
window=${FAULTKIT_GATE_WINDOW:-20s}
repeat=${FAULTKIT_GATE_REPEAT:-2}
stability=${FAULTKIT_GATE_STABILITY:-same}
junit=${FAULTKIT_GATE_JUNIT:-faultkit-gate.xml}
up_timeout=${FAULTKIT_GATE_UP_TIMEOUT:-300}
rollout_timeout=${FAULTKIT_GATE_ROLLOUT_TIMEOUT:-60}
max_load=()
if [ -n "${FAULTKIT_GATE_MAX_LOAD:-}" ]; then max_load=(--max-load "$FAULTKIT_GATE_MAX_LOAD"); fi
read -r -a faultkit <<<"${FAULTKIT:-faultkit}"
accept=()
case "${FAULTKIT_GATE_ACCEPT_PRIVILEGED:-}" in true | 1) accept=(--accept-privileged) ;; esac

# the lint pass alone first: a pull request that changes no entry needs no cluster
changed=$("${faultkit[@]}" gate --base "$base" "${accept[@]}" --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["cases"]))') || {
  echo "gate-kubernetes.sh: the lint pass failed; running it again for its report" >&2
  exec "${faultkit[@]}" gate --base "$base" "${accept[@]}" --junit "$junit" --github
}
if [ "$changed" = 0 ]; then
  echo "gate-kubernetes.sh: no changed entry to validate; nothing to bring up"
  exec "${faultkit[@]}" gate --base "$base" "${accept[@]}" --junit "$junit" --github
fi

down() {
  "${faultkit[@]}" down --platform kubernetes || echo "gate-kubernetes.sh: down failed; delete namespace $namespace by hand" >&2
}
trap down EXIT

echo "gate-kubernetes.sh: $changed changed entries; bringing $app up in namespace $namespace"
"${faultkit[@]}" up --platform kubernetes --app "$app" --namespace "$namespace" --timeout "$up_timeout"
"${faultkit[@]}" status --platform kubernetes
set +e
"${faultkit[@]}" gate --base "$base" "${accept[@]}" --validate --platform kubernetes --window "$window" --repeat "$repeat" \
  --stability "$stability" --rollout-timeout "$rollout_timeout" "${max_load[@]}" --junit "$junit" --github
code=$?
set -e
exit "$code"

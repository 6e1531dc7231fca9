#!/usr/bin/env bash
# Set faultkit up on a fresh machine and run its main job on the embedded default: minishop on the
# local platform. Lints the catalog, starts minishop under load, validates one fault of each
# mechanism with short windows, prints the verdicts, and stops minishop again.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
# git applies code-fault patches; Chromium renders the HTML report in the tests
if ! command -v git >/dev/null || ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git chromium >/dev/null
  else
    echo "note: install git and chromium (apt-get install git chromium) for the full test suite" >&2
  fi
fi
python3 -m pip install -q -e ".[test,plot]"
# keep this demo's platform state and evidence out of the repository's own
export FAULTKIT_STATE_DIR="${FAULTKIT_STATE_DIR:-$(mktemp -d)}"
evidence="$(mktemp -d)"

faultkit catalog lint
faultkit apps show minishop
faultkit up --app minishop
trap 'faultkit down' EXIT
sleep 10   # let the load generator drive traffic for a while
faultkit status

for fault in ${FAULTKIT_DEMO_FAULTS:-minishop-checkout-env-payment-addr-port minishop-cartstore-instance-failure minishop-code-checkout-shipping-quote}; do
  faultkit validate --fault "$fault" --window 10s --interval 1s --repeat 1 --no-record \
    --evidence "$evidence" || true   # a rejection is a result, not a failure of the demo
done
echo "evidence bundles: $evidence"

#!/usr/bin/env bash
# Validate every entry of an app's catalog (or the ids given) on the local platform, one after
# another, recording each verdict in its entry and its evidence under evidence/.
# Usage: scripts/validate_catalog.sh APP [ID...]   (WINDOW, INTERVAL, REPEAT override the defaults;
# STABILITY=15s (or same) adds the second verdict that rules v3 need before a release)
set -u
cd "$(dirname "$0")/.."
app="${1:?usage: scripts/validate_catalog.sh APP [ID...]}"; shift
ids=("$@")
[ ${#ids[@]} -gt 0 ] || mapfile -t ids < <(ls "catalog/$app" | sed 's/\.yaml$//')
faultkit up --app "$app" 2>/dev/null || true   # refused when it is already up: fine
start=$(date +%s)
for id in "${ids[@]}"; do
  t0=$(date +%s)
  stable=(); [ -z "${STABILITY:-}" ] || stable=(--stability "$STABILITY")
  verdict=$(faultkit validate --fault "$id" --window "${WINDOW:-6s}" --interval "${INTERVAL:-1s}" \
            --repeat "${REPEAT:-2}" "${stable[@]}" --json 2>/dev/null | python3 -c 'import json,sys
v = json.load(sys.stdin)
last = (v.get("second") or v.get("first") or v)
print(v["status"], ",".join(last["failed_rules"]))' 2>/dev/null || echo "error")
  echo "$id $verdict ($(( $(date +%s) - t0 ))s)"
done
echo "total: $(( $(date +%s) - start ))s for ${#ids[@]} faults"

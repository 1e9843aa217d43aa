#!/usr/bin/env bash
# The arrows of ARCHITECTURE.md point inward: core, ledger and ports never
# import an adapter or app, and ledger never imports core or ports.
set -euo pipefail
mod=$(go list -m)
fail=0
for layer in core ledger ports; do
  [ -d "$layer" ] || continue
  bad=$(go list -deps "./$layer/..." | grep -E "^$mod/(adapters|app)(/|$)" || true)
  if [ -n "$bad" ]; then echo "layering: $layer imports outward: $bad"; fail=1; fi
done
bad=$(go list -deps ./ledger/... | grep -E "^$mod/(core|ports)(/|$)" || true)
if [ -n "$bad" ]; then echo "layering: ledger imports $bad"; fail=1; fi
# core and ledger take time from the Clock port, never the wall clock.
wall=$(grep -rn --include='*.go' --exclude='*_test.go' -E 'time\.Now\(\)' core ledger || true)
if [ -n "$wall" ]; then echo "layering: time.Now() in core/ledger (use ports.Clock):"; echo "$wall"; fail=1; fi
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail

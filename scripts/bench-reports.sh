#!/usr/bin/env bash
# The ledger reports on 1,000,000 journal entries (REPORTS_BENCH_ENTRIES),
# bulk-loaded with COPY: trial balance, point-in-time balance, statement
# page, reconciliation export (in process and through `corridor ledger
# export`, with its peak RSS) and journal verification. Aims: trial balance
# < 1 s, balance p99 < 10 ms, statement page p99 < 20 ms, export >= 50,000
# rows/s with flat memory, verify >= 100,000 entries/s.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "== ledger reports on ${REPORTS_BENCH_ENTRIES:-1000000} journal entries"
go test -run '^$' -bench 'BenchmarkLedgerReports' -benchtime 1x -timeout 60m ./app/ | tee "$out"
awk '
  /^BenchmarkLedgerReports\// {
    name = $1; sub(/^BenchmarkLedgerReports\//, "", name); sub(/-[0-9]+$/, "", name)
    line = ""
    for (i = 2; i <= NF; i++) {
      if ($i ~ /^(p50_ms|p99_ms|rows\/s|entries\/s|peak_rss_MiB|heap_growth_MiB|rows|s)$/) line = line sprintf("  %s %s", $i, $(i-1))
    }
    printf "%-28s%s\n", name, line
  }
' "$out"

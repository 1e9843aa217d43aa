#!/usr/bin/env bash
# make bench: the performance figures of the foundation, in one run.
#  1. pgbench (TPC-B-like) at concurrency 1, 8, 64: the machine's reference
#     for "one small transaction per commit".
#  2. The ledger store posting single-phase transfers at the same
#     concurrencies, on memory and PostgreSQL, spread over 10,000 accounts and
#     all through one hot account.
#  3. POST /sandbox/internal-accounts/{id}/fund over HTTP (memory, PostgreSQL).
# Every PostgreSQL figure is also printed as a ratio to pgbench's tps at the
# same concurrency. Environment: BENCH_SECONDS (pgbench run length, default
# 10), LEDGER_BENCHTIME (default 20000x), HTTP_BENCHTIME (default 3000x).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== pgbench (TPC-B-like, ${BENCH_SECONDS:-10}s per run)"
bash scripts/bench-pgbench.sh | tee "$out/pgbench.txt"

echo
echo "== ledger store: single-phase transfers"
go test -run '^$' -bench 'BenchmarkLedgerPost' -benchtime "${LEDGER_BENCHTIME:-20000x}" -timeout 30m ./adapters/postgres/ | tee "$out/ledger.txt"

echo
echo "== HTTP: POST /sandbox/internal-accounts/{id}/fund"
go test -run '^$' -bench 'BenchmarkHTTPFund' -benchtime "${HTTP_BENCHTIME:-3000x}" -timeout 30m ./app/ | tee "$out/http.txt"

echo
echo "== summary (ops/s, p50, p99; PostgreSQL rows also as a ratio to pgbench tps at the same concurrency)"
awk '
  FNR == NR { if ($1 == "pgbench") { split($2, cc, "="); split($3, tt, "="); pg[cc[2]] = tt[2] } ; next }
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    ops = ""; p50 = ""; p99 = ""
    for (i = 2; i <= NF; i++) {
      if ($i == "ops/s") ops = $(i-1)
      if ($i == "p50_ms") p50 = $(i-1)
      if ($i == "p99_ms") p99 = $(i-1)
    }
    if (ops == "") next
    conc = name; sub(/.*c=/, "", conc)
    ratio = ""
    if (name ~ /postgres/ && pg[conc] > 0) ratio = sprintf("  = %.2fx pgbench c=%s", ops / pg[conc], conc)
    printf "%-60s %10.0f ops/s  p50 %7.3f ms  p99 %7.3f ms%s\n", name, ops, p50, p99, ratio
    if (name ~ /LedgerPost\/store=postgres\/accounts=spread/) spread[conc] = ops
    if (name ~ /LedgerPost\/store=postgres\/accounts=hot/) hot[conc] = ops
  }
  END {
    for (k in hot) if (spread[k] > 0) printf "postgres hot/spread at c=%s: %.2f\n", k, hot[k] / spread[k]
  }
' "$out/pgbench.txt" "$out/ledger.txt" "$out/http.txt"

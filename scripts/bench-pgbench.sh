#!/usr/bin/env bash
# pgbench reference: how many TPC-B-like transactions a second this machine's
# PostgreSQL commits at concurrency 1, 8 and 64. The ledger benchmarks are
# read against these figures (one fsync-bound commit per transaction).
#
# Uses the server from DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
# in a scratch database it creates and drops. Prints one line per run:
#   pgbench c=8 tps=1234.5
# Environment: BENCH_SECONDS (default 10), BENCH_CLIENTS (default "1 8 64").
set -euo pipefail

url="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
seconds="${BENCH_SECONDS:-10}"
clients="${BENCH_CLIENTS:-1 8 64}"

command -v pgbench >/dev/null || { echo "bench-pgbench: pgbench not found (apt-get install postgresql-contrib or postgresql-client)" >&2; exit 1; }

# Point a URL at another database, keeping host, user and query string.
with_db() {
  local base="$1" db="$2" rest query=""
  case "$base" in *\?*) query="?${base#*\?}"; base="${base%%\?*}" ;; esac
  rest="${base#*://}"
  case "$rest" in */*) base="${base%/*}" ;; esac
  printf '%s/%s%s' "$base" "$db" "$query"
}

db="corridor_pgbench_$$"
admin="$url"
scratch="$(with_db "$url" "$db")"

cleanup() { psql "$admin" -qAtc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; }
trap cleanup EXIT

psql "$admin" -qAtc "CREATE DATABASE $db" >/dev/null
pgbench -i -s 1 -q "$scratch" >/dev/null 2>&1

for c in $clients; do
  j=$(( c < 2 ? c : 2 ))
  out="$(pgbench -n -c "$c" -j "$j" -T "$seconds" "$scratch" 2>&1)" || { echo "$out" >&2; exit 1; }
  tps="$(printf '%s\n' "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -n1)"
  [ -n "$tps" ] || { echo "$out" >&2; exit 1; }
  printf 'pgbench c=%s tps=%.1f\n' "$c" "$tps"
done

#!/usr/bin/env bash
# make bench: the performance figures of the foundation, in one run.
#  1. pgbench (TPC-B-like) at concurrency 1, 8, 64: the machine's reference
#     for "one small transaction per commit".
#  2. The ledger store posting single-phase transfers at the same
#     concurrencies, on memory and PostgreSQL, spread over 10,000 accounts and
#     all through one hot account.
#  3. POST /sandbox/internal-accounts/{id}/fund over HTTP (memory, PostgreSQL).
#  4. POST /transfer-out over HTTP (memory, PostgreSQL; with and without the
#     job loop running the rail outcomes alongside; and with webhook
#     delivery on to a local receiver: events delivered per second and the
#     outbox lag, change to the receiver's 2xx).
#  4a. A backlog of webhook events delivered by one instance's delivery
#     loops alone (memory, PostgreSQL): events per second and CPU per event.
#  4b. POST /quotes + POST /quotes/{id}/execute round trips over HTTP
#     (memory, PostgreSQL; job loop off/on), and immediatelyExecute for
#     reference.
#  4c. The same round trips paid from embedded wallets, each execute carrying
#     a real Service-Wallet-Signature stamp, beside ordinary accounts
#     (memory, PostgreSQL + Redis), and the CPU of one stamp verification.
#  4d. The lone caller (c=1: transfer-out, quote round trip, pgbench)
#     through PostgreSQL's Unix socket, when the server is on this
#     machine (its line printed after the summary).
#  5. One GET /transactions page as the PostgreSQL store serves it, with
#     100,000 and 1,000,000 transactions in the table: first and deep page,
#     unfiltered and filtered (by customer, status…).
# Every PostgreSQL figure is also printed as a ratio to pgbench's tps at the
# same concurrency. Environment: BENCH_SECONDS (pgbench run length, default
# 10), LEDGER_BENCHTIME (default 20000x), HTTP_BENCHTIME (default 3000x),
# TRANSFER_BENCHTIME (default 3000x), DRAIN_BENCHTIME (default 4000x
# transfer-outs, two events each), QUOTE_BENCHTIME (default 3000x),
# STAMPED_BENCHTIME (default 1500x, of each side),
# LIST_BENCHTIME (default 500x). The ledger reports over 1,000,000 journal
# entries come last (scripts/bench-reports.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== pgbench (TPC-B-like, ${BENCH_SECONDS:-10}s per run)"
bash scripts/bench-pgbench.sh | tee "$out/pgbench.txt"

echo
echo "== ledger store: single-phase transfers; two writers on one database, on one hash chain and on a chain each"
go test -run '^$' -bench 'BenchmarkLedger(Post|TwoWriters)' -benchtime "${LEDGER_BENCHTIME:-20000x}" -timeout 30m ./adapters/postgres/ | tee "$out/ledger.txt"

echo
echo "== HTTP: POST /sandbox/internal-accounts/{id}/fund"
go test -run '^$' -bench 'BenchmarkHTTPFund' -benchtime "${HTTP_BENCHTIME:-3000x}" -timeout 30m ./app/ | tee "$out/http.txt"

echo
echo "== HTTP: POST /transfer-out"
go test -run '^$' -bench 'BenchmarkHTTPTransferOut' -benchtime "${TRANSFER_BENCHTIME:-3000x}" -timeout 30m ./app/ | tee "$out/transfer.txt"

echo
echo "== webhooks: a backlog of events (two per transfer-out) delivered to a local receiver: the delivery path alone"
go test -run '^$' -bench 'BenchmarkWebhookDrain' -benchtime "${DRAIN_BENCHTIME:-4000x}" -timeout 30m ./app/ | tee "$out/drain.txt"

echo
echo "== webhooks: the least one delivery can cost (sign a 1.1 kB body, POST it to a local receiver that only reads it; no store, queue or rendering)"
go test -run '^$' -bench 'BenchmarkSignedSend' -benchtime "${SEND_BENCHTIME:-20000x}" ./adapters/webhooks/ | tee "$out/send.txt"

echo
echo "== HTTP: POST /quotes then POST /quotes/{id}/execute (one op = the round trip); immediatelyExecute for reference"
go test -run '^$' -bench '^BenchmarkHTTPQuote(Immediate)?$' -benchtime "${QUOTE_BENCHTIME:-3000x}" -timeout 30m ./app/ | tee "$out/quote.txt"

# The lone caller through PostgreSQL's Unix socket, when the server is on
# this machine: what a deployment beside its database gets at c=1 (every
# round trip spares the TCP stack; README "Running on PostgreSQL and
# Redis"). pgbench is run through the same socket for the ratio. Run
# right after the same benchmarks over TCP, before the list benchmarks'
# million-row tables leave the server vacuuming; printed after the
# summary.
echo
echo "== the lone caller (c=1) through PostgreSQL's Unix socket, pgbench through it too"
url="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
if sock_info=$(psql "$url" -qAt -F ' ' -c "SELECT current_user, current_database(), split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port')" 2>/dev/null) &&
   read -r sock_user sock_db sock_dir sock_port <<<"$sock_info" && [ -S "$sock_dir/.s.PGSQL.$sock_port" ]; then
  sock_url="postgres://$sock_user@/$sock_db?host=$sock_dir&port=$sock_port"
  DATABASE_URL="$sock_url" BENCH_CLIENTS=1 bash scripts/bench-pgbench.sh | tee "$out/sock-pgbench.txt"
  DATABASE_URL="$sock_url" go test -run '^$' -bench '^(BenchmarkHTTPTransferOut|BenchmarkHTTPQuote)$/postgres/workers=off/c=1$' \
    -benchtime "${TRANSFER_BENCHTIME:-3000x}" -timeout 30m ./app/ | tee "$out/sock.txt"
else
  echo "(skipped: the server's socket is not on this machine)"
fi

echo
echo "== HTTP: quote round trips paid from embedded wallets (the execute carrying a real stamp) beside ordinary internal accounts, in alternating rounds"
go test -run '^$' -bench '^BenchmarkHTTPQuoteStamped$' -benchtime "${STAMPED_BENCHTIME:-1500x}" -timeout 30m ./app/ | tee "$out/stamped.txt"

echo
echo "== Service-Wallet-Signature: parse and verify one stamp (CPU per stamped request)"
go test -run '^$' -bench 'BenchmarkStampVerify' -benchtime 5000x ./core/walletauth/ | tee "$out/stamp.txt"

echo
echo "== GET /transactions: one page from the PostgreSQL store, 100k and 1M transactions"
go test -run '^$' -bench 'BenchmarkTransactionList' -benchtime "${LIST_BENCHTIME:-500x}" -timeout 60m ./adapters/postgres/ | tee "$out/list.txt"

echo
echo "== summary (ops/s, p50, p99; PostgreSQL rows also as a ratio to pgbench tps at the same concurrency; HTTP rows on PostgreSQL also their CPU per operation: the test process (service and load client) + the local PostgreSQL server)"
awk '
  FNR == NR { if ($1 == "pgbench") { split($2, cc, "="); split($3, tt, "="); pg[cc[2]] = tt[2] } ; next }
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    ops = ""; p50 = ""; p99 = ""; cpu = ""; pgcpu = ""
    for (i = 2; i <= NF; i++) {
      if ($i == "ops/s") ops = $(i-1)
      if ($i == "p50_ms") p50 = $(i-1)
      if ($i == "p99_ms") p99 = $(i-1)
      if ($i == "cpu_ms/op") cpu = $(i-1)
      if ($i == "pg_cpu_ms/op") pgcpu = $(i-1)
    }
    if (name ~ /HTTPQuoteStamped/) {
      for (i = 2; i <= NF; i++) {
        if ($i == "plain_ops/s") sp = $(i-1)
        if ($i == "stamped_ops/s") ss = $(i-1)
        if ($i == "stamped/plain") sr = $(i-1)
        if ($i == "stamped_p50_ms") s50 = $(i-1)
      }
      printf "%-60s %10.0f ops/s stamped vs %.0f plain = %.2fx (aim: >= 0.9x)  stamped p50 %7.3f ms\n", name, ss, sp, sr, s50
      next
    }
    if (name ~ /WebhookDrain/) {
      for (i = 2; i <= NF; i++) {
        if ($i == "events/s") de = $(i-1)
        if ($i == "cpu_us/event") dc = $(i-1)
        if ($i == "pg_cpu_us/event") dp = $(i-1)
      }
      printf "%-60s %10.0f events/s delivered from a backlog, CPU per event %.0f + %.0f us\n", name, de, dc, dp
      next
    }
    if (name ~ /SignedSend/) {
      for (i = 2; i <= NF; i++) if ($i == "cpu_us/event") floor = $(i-1)
      printf "%-60s %10.0f us of CPU per event: signing and POSTing alone, receiver included\n", name, floor
      next
    }
    if (name ~ /StampVerify/) {
      for (i = 2; i <= NF; i++) if ($i == "ns/op") printf "%-60s %10.3f ms of CPU per stamp (aim: < 0.2 ms)\n", name, $(i-1) / 1e6
      next
    }
    if (ops == "") next
    conc = name; sub(/.*c=/, "", conc)
    ratio = ""
    if (name ~ /postgres/ && pg[conc] > 0) ratio = sprintf("  = %.2fx pgbench c=%s", ops / pg[conc], conc)
    cpus = ""
    if (name ~ /HTTP/ && name ~ /postgres/ && cpu != "" && pgcpu != "") cpus = sprintf("  CPU/op %.3f + %.3f ms", cpu, pgcpu)
    printf "%-60s %10.0f ops/s  p50 %7.3f ms  p99 %7.3f ms%s%s\n", name, ops, p50, p99, ratio, cpus
    if (name ~ /LedgerPost\/store=postgres\/accounts=spread/) { spread[conc] = ops; spread50[conc] = p50 }
    if (name ~ /LedgerPost\/store=postgres\/accounts=hot/) hot[conc] = ops
    if (name ~ /LedgerTwoWriters\/chains=one/) onechain[conc] = ops
    if (name ~ /LedgerTwoWriters\/chains=two/) twochains[conc] = ops
    if (name ~ /HTTPTransferOut\/postgres\/workers=off/) { xfer[conc] = ops; xfer50[conc] = p50; xfercpu[conc] = cpu; xferpg[conc] = pgcpu }
    if (name ~ /HTTPTransferOut\/postgres\/workers=on\/c=/) { xferw[conc] = ops; xferwcpu[conc] = cpu + pgcpu }
    if (name ~ /HTTPTransferOut\/postgres\/workers=on\/webhooks=on/) {
      xferh[conc] = ops
      for (i = 2; i <= NF; i++) {
        if ($i == "events/s") evs[conc] = $(i-1)
        if ($i == "lag_p99_ms") lag[conc] = $(i-1)
      }
    }
    if (name ~ /HTTPQuote\/postgres\/workers=off/) {
      quote[conc] = ops; quote50[conc] = p50
      for (i = 2; i <= NF; i++) {
        if ($i == "create_p50_ms") quotec50[conc] = $(i-1)
        if ($i == "execute_p50_ms") quotee50[conc] = $(i-1)
      }
    }
    if (name ~ /HTTPQuote\/postgres\/workers=on/) quotew[conc] = ops
    if (name ~ /TransactionList\/rows=/) {
      rows = name; sub(/.*rows=/, "", rows); sub(/\/.*/, "", rows)
      page = name; sub(/.*TransactionList\/rows=[0-9]+\//, "", page)
      listp99[rows "|" page] = p99
      if (p99 + 0 > worst[rows] + 0) worst[rows] = p99
      pages[page] = 1
    }
  }
  END {
    if (spread50[1] != "" || xfer50[1] != "" || quote50[1] != "")
      printf "lone caller (c=1) p50 on PostgreSQL: ledger post %.2f ms (aim: <= 1.5), transfer-out %.2f ms (aim: <= 2.5), quote create+execute %.2f ms (aim: <= 4; create %.2f, execute %.2f)\n", spread50[1], xfer50[1], quote50[1], quotec50[1], quotee50[1]
    for (k in hot) if (spread[k] > 0) printf "postgres hot/spread at c=%s: %.2f\n", k, hot[k] / spread[k]
    for (k in twochains) if (onechain[k] > 0) printf "two ledger writers on one database, c=%s: %.0f/s on one chain, %.0f/s on a chain each = %.2fx\n", k, onechain[k], twochains[k], twochains[k] / onechain[k]
    if (pg[1] > 0 && spread[1] > 0) printf "ledger post, PostgreSQL, spread, c=1: %.0f/s = %.2fx pgbench c=1 (aim: >= 0.6x)\n", spread[1], spread[1] / pg[1]
    if (pg[64] > 0 && spread[64] > 0) printf "ledger post, PostgreSQL, spread, c=64: %.0f/s = %.2fx pgbench c=64 (aim: >= 8x)\n", spread[64], spread[64] / pg[64]
    if (xfercpu[1] != "" && xferpg[1] != "") printf "CPU per transfer-out over HTTP, PostgreSQL, c=1 / 8 / 64: test process %s / %s / %s ms, PostgreSQL %s / %s / %s ms\n", xfercpu[1], xfercpu[8], xfercpu[64], xferpg[1], xferpg[8], xferpg[64]
    if (pg[8] > 0 && xfer[8] > 0) printf "transfer-out over HTTP, PostgreSQL, c=8: %.0f/s = %.2fx pgbench c=8 (aim: >= 1x)\n", xfer[8], xfer[8] / pg[8]
    if (pg[64] > 0 && xfer[64] > 0) printf "transfer-out over HTTP, PostgreSQL, c=64: %.0f/s = %.2fx pgbench c=64 (aim: >= 3x)\n", xfer[64], xfer[64] / pg[64]
    for (k in xferw) if (xfer[k] > 0) printf "transfer-out with the job loop, c=%s: %.0f/s = %.2fx without it (aim: >= 0.9x)\n", k, xferw[k], xferw[k] / xfer[k]
    for (k in xferh) if (xferw[k] > 0) printf "webhooks on, transfer-out c=%s: %.0f/s = %.2fx without delivery (aim: >= 0.9x); %.0f events/s delivered, outbox lag p99 %.0f ms (aim: < 1000)\n", k, xferh[k], xferh[k] / xferw[k], evs[k], lag[k]
    # Where the two cores are full (c=8, c=64), throughput goes as 1 / CPU
    # per transfer-out, so "delivery on >= 0.9x of off" leaves its events
    # (delivered per transfer-out) a ninth of the transfer-out CPU with the
    # job loop: the budget per event, against the floor of signing and
    # POSTing one (BenchmarkSignedSend).
    for (k in xferh) if (k + 0 > 1 && floor > 0 && xferh[k] > 0 && xferwcpu[k] > 0 && evs[k] > 0)
      printf "webhooks on, c=%s: %.1f events delivered a transfer-out; at 0.9x their CPU budget is %.0f us an event, and signing and POSTing one alone takes %.0f us\n", k, evs[k] / xferh[k], xferwcpu[k] * 1000 / (9 * evs[k] / xferh[k]), floor
    for (k in quote) if (xfer[k] > 0) printf "quote create+execute round trips over HTTP, PostgreSQL, c=%s: %.0f/s = %.2fx transfer-out (aim: >= 0.6x); with the job loop: %.0f/s = %.2fx\n", k, quote[k], quote[k] / xfer[k], quotew[k], (xferw[k] > 0 ? quotew[k] / xferw[k] : 0)
    for (p in pages) if (listp99["100000|" p] != "" && listp99["1000000|" p] != "")
      printf "GET /transactions %-40s p99 %7.3f ms at 100k, %7.3f ms at 1M\n", p, listp99["100000|" p], listp99["1000000|" p]
    for (r in worst) printf "GET /transactions worst page p99 at %s rows: %.3f ms (aim: < 20 ms)\n", r, worst[r]
  }
' "$out/pgbench.txt" "$out/ledger.txt" "$out/http.txt" "$out/transfer.txt" "$out/drain.txt" "$out/send.txt" "$out/quote.txt" "$out/stamped.txt" "$out/stamp.txt" "$out/list.txt"

if [ -s "$out/sock.txt" ]; then
  awk '
    FNR == NR { if ($1 == "pgbench") { split($3, tt, "="); pg = tt[2] } ; next }
    /^Benchmark/ { for (i = 2; i <= NF; i++) { if ($i == "p50_ms") p50 = $(i-1); if ($i == "ops/s") ops = $(i-1) }
      if ($1 ~ /TransferOut/) { x50 = p50; xops = ops } else q50 = p50 }
    END { printf "lone caller (c=1) p50 through the Unix socket: transfer-out %.2f ms (%.0f/s = %.2fx pgbench c=1 %.0f tps through it), quote create+execute %.2f ms\n", x50, xops, (pg > 0 ? xops / pg : 0), pg, q50 }
  ' "$out/sock-pgbench.txt" "$out/sock.txt"
fi

# The curves at a glance: throughput against concurrency, corridor's
# PostgreSQL operations beside pgbench (kept after the run, unlike $out).
go run ./scripts/benchchart -o bin/bench/throughput.svg "$out/pgbench.txt" "$out/ledger.txt" "$out/transfer.txt" "$out/quote.txt"

echo
bash scripts/bench-reports.sh

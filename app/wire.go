package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/uptrace/bun"

	fxstatic "github.com/corridorpay/corridor/adapters/fx/static"
	kycmanual "github.com/corridorpay/corridor/adapters/kyc/manual"
	kycsandbox "github.com/corridorpay/corridor/adapters/kyc/sandbox"
	"github.com/corridorpay/corridor/adapters/mailer"
	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/adapters/metrics"
	"github.com/corridorpay/corridor/adapters/oidc"
	"github.com/corridorpay/corridor/adapters/postgres"
	"github.com/corridorpay/corridor/adapters/rails/sandbox"
	"github.com/corridorpay/corridor/adapters/redis"
	"github.com/corridorpay/corridor/adapters/system"
	umasandbox "github.com/corridorpay/corridor/adapters/uma/sandbox"
	verifysandbox "github.com/corridorpay/corridor/adapters/verify/sandbox"
	"github.com/corridorpay/corridor/adapters/webhooks"
	"github.com/corridorpay/corridor/core/accounts"
	"github.com/corridorpay/corridor/core/agents"
	"github.com/corridorpay/corridor/core/agents/spend"
	"github.com/corridorpay/corridor/core/approvals"
	"github.com/corridorpay/corridor/core/customers"
	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/core/external"
	"github.com/corridorpay/corridor/core/fx"
	"github.com/corridorpay/corridor/core/invitations"
	"github.com/corridorpay/corridor/core/jobs"
	"github.com/corridorpay/corridor/core/kyc"
	"github.com/corridorpay/corridor/core/lookup"
	"github.com/corridorpay/corridor/core/money"
	"github.com/corridorpay/corridor/core/platforms"
	"github.com/corridorpay/corridor/core/quotes"
	"github.com/corridorpay/corridor/core/rails"
	"github.com/corridorpay/corridor/core/reports"
	"github.com/corridorpay/corridor/core/transactions"
	"github.com/corridorpay/corridor/core/transfers"
	"github.com/corridorpay/corridor/core/uma"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ledger"
	"github.com/corridorpay/corridor/ports"

	httpapi "github.com/corridorpay/corridor/adapters/http"
)

// backend is the set of adapters chosen by configuration.
type backend struct {
	store  ports.Store
	ledger ports.LedgerStore
	idem   ports.IdempotencyStore
	// agentUsage keeps agents' spending counters (core/agents/policy).
	agentUsage ports.AgentUsageStore
	cache      ports.ResponseCache
	single     ports.SingleUse
	// failures counts failed authentication attempts (the auth throttle).
	failures ports.FailureCounter
	// metrics is the process's Prometheus registry (GET /metrics).
	metrics *metrics.Metrics
	// rails routes money to the world: one adapter per row of the rail
	// table (the sandbox adapter for every rail, for now).
	rails *rails.Registry
	// deliveryClaim is how many webhook delivery jobs one claim takes
	// when deliveries keep up: 32 jobs of one event each on memory; on
	// PostgreSQL, which queues one job for the events one statement
	// records (up to ports.EventsPerDeliveryJob, 8), 8 jobs, up to 64
	// events. A batch of many more runs long, each event waiting for the
	// rest of its batch, and the other loop's batches then find earlier
	// events of their resources still unsent and send them one by one.
	// While claims come back full (a backlog), each claim doubles, up to
	// deliveryClaimGrowth times this (jobs.WithBatchGrowth): a batch's
	// reads and its end are paid once for more events, and the backlog
	// drains instead of growing.
	deliveryClaim int
	// uma resolves UMA receivers (the sandbox directory at the configured
	// domain, for now): lookups and the UMA payout rails use it.
	uma ports.UmaDirectory
	log *slog.Logger
	// durable is true on PostgreSQL (state survives a restart).
	durable bool
	// revocations, when set, tells until ctx ends of API tokens deleted
	// through other instances (forget), or that some may have been
	// missed (forgetAll): see postgres.WatchCredentialRevocations.
	revocations func(ctx context.Context, forget func(clientID string), forgetAll func())
	pingers     map[string]ports.Pinger
	closers     []func()
	// reports reads the ledger for the /ledger reports and the ledger CLI.
	reports ports.LedgerReports
	// tokens checks OAUTH credentials' ID-token signatures against their
	// issuers' key sets (fetched on first use, cached).
	tokens *oidc.KeySets
}

// deliveryClaimGrowth bounds how far a delivery claim grows under a
// backlog (see backend.deliveryClaim): on PostgreSQL, 64 jobs, up to 512
// events (four times the base gave a higher lag at c=64 in three
// interleaved pairs of three; a claim of 1,024 events at every claim, not
// growing, was slower: docs/performance.md).
const deliveryClaimGrowth = 8

// openBackend picks PostgreSQL (DATABASE_URL) or memory, and Redis
// (REDIS_URL) or memory caches. On PostgreSQL it applies migrations first.
func openBackend(ctx context.Context, cfg Config, clock ports.Clock, log *slog.Logger) (*backend, error) {
	b := &backend{pingers: map[string]ports.Pinger{}, log: log, metrics: metrics.New(), deliveryClaim: 32}
	b.uma = umasandbox.New(cfg.SandboxUmaDomain)
	// The rail table, settling after the sandbox's settlement delay, plus
	// one UMA payout rail per currency (quotes to UMA addresses settle
	// through them).
	specs := rails.WithSettlementDelay(rails.DefaultSpecs(), cfg.SettlementDelay)
	reg, err := rails.FromSpecs(specs, sandbox.FactoryWithUMA(clock, b.uma))
	if err != nil {
		return nil, err
	}
	b.rails = reg
	tokensCtx, stopTokens := context.WithCancel(context.WithoutCancel(ctx))
	if b.tokens, err = oidc.New(tokensCtx, oidc.Options{Issuers: cfg.OIDCIssuers, Logger: log}); err != nil {
		stopTokens()
		return nil, fmt.Errorf("oidc: %w", err)
	}
	b.closers = append(b.closers, stopTokens)
	if cfg.DatabaseURL != "" {
		db, err := openMigrated(ctx, cfg.DatabaseURL, log, postgres.MaxConns(cfg.DBMaxConns))
		if err != nil {
			return nil, err
		}
		led := postgres.NewLedger(db, clock, postgres.LedgerOptions{Logger: log, Observe: b.metrics.LedgerBatch, Shard: cfg.LedgerShard})
		b.metrics.WatchDB(db.DB, "corridor")
		b.ledger = led
		b.store = postgres.NewStore(db)
		b.deliveryClaim = 64 / ports.EventsPerDeliveryJob
		b.reports = postgres.NewLedgerReports(db)
		b.idem = postgres.NewIdempotencyStore(db)
		b.agentUsage = postgres.NewAgentUsageStore(db)
		b.durable = true
		b.pingers["database"] = pingDB{db}
		b.closers = append(b.closers, led.Close, func() { _ = db.Close() })
		b.revocations = func(ctx context.Context, forget func(string), forgetAll func()) {
			postgres.WatchCredentialRevocations(ctx, db, forget, forgetAll)
		}
	} else {
		led := memory.NewLedger(clock)
		b.ledger = led
		st := memory.NewStore(led)
		b.store = st
		b.reports = memory.NewLedgerReports(led, st)
		b.idem = memory.NewIdempotencyStore()
		b.agentUsage = memory.NewAgentUsageStore()
	}
	if cfg.RedisURL != "" {
		rc, err := redis.New(cfg.RedisURL, redis.WithHook(b.metrics.RedisHook()), redis.WithPrefix(cfg.RedisPrefix))
		if err != nil {
			b.close()
			return nil, err
		}
		if err := rc.Ping(ctx); err != nil {
			b.close()
			return nil, err
		}
		b.cache, b.single, b.failures = rc.ResponseCache(), rc.SingleUse(), rc.FailureCounter()
		b.pingers["redis"] = rc
		b.closers = append(b.closers, func() { _ = rc.Close() })
	} else {
		b.cache = memory.NewResponseCache(clock)
		b.single = memory.NewSingleUse(clock)
		b.failures = memory.NewFailureCounter(clock)
	}
	if jobs, ok := b.store.Read().Jobs().(ports.JobBacklogReader); ok {
		b.metrics.WatchJobs(jobs, clock)
	}
	// The system accounts (sandbox funding, fee revenue, FX position per
	// currency; settlement per rail and currency of the rail table) exist
	// before any request can move money.
	if err := b.ledger.CreateAccounts(ctx, ledger.SystemAccounts(money.Codes(), b.rails.SettlementRails())...); err != nil {
		b.close()
		return nil, fmt.Errorf("create system accounts: %w", err)
	}
	return b, nil
}

// issuerNames are the iss values of the configured issuers.
func issuerNames(issuers []oidc.Issuer) []string {
	out := make([]string, len(issuers))
	for i, iss := range issuers {
		out[i] = iss.Issuer
	}
	return out
}

func (b *backend) close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
}

// ready reports whether every backing service answers.
func (b *backend) ready(ctx context.Context) error {
	var errs []error
	for name, p := range b.pingers {
		if err := p.Ping(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s unreachable: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func openMigrated(ctx context.Context, dsn string, log *slog.Logger, opts ...postgres.Option) (*bun.DB, error) {
	db, err := postgres.Open(ctx, dsn, opts...)
	if err != nil {
		return nil, err
	}
	if _, err := postgres.Migrate(ctx, db, log); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

type pingDB struct{ db *bun.DB }

func (p pingDB) Ping(ctx context.Context) error { return p.db.PingContext(ctx) }

// services are the core use cases wired to a backend.
type services struct {
	platforms *platforms.Service
	customers *customers.Service
	accounts  *accounts.Service
	// runner runs the durable jobs (rail outcomes…); the areas register
	// their handlers on it, the workers loop drives it.
	runner *jobs.Runner
	// transfers moves money in and out over the rails; transactions
	// reads the payments.
	transfers    *transfers.Service
	transactions *transactions.Service
	// external manages external (bank and wallet) accounts; lookup answers
	// receiver lookups.
	external *external.Service
	lookup   *lookup.Service
	// exchangeRates lists indicative rates; uma simulates incoming UMA
	// payments (sandbox).
	exchangeRates *fx.Board
	uma           *uma.Service
	approvals     *approvals.Service
	// kyc verifies customers (owners, documents, verifications).
	kyc *kyc.Service
	// quotes prices, executes and settles cross-currency payments.
	quotes *quotes.Service
	// invitations keeps UMA invitations (their expiry is a job).
	invitations *invitations.Service
	// agents keeps agents, their connection and their actions.
	agents *agents.Service
	// agentSpend is the agents' quotes, transfers and their approvals.
	agentSpend *spend.Service
	// reports answers the ledger reports (/ledger, corridor ledger).
	reports *reports.Service
	// walletauth issues embedded-wallet sessions and checks stamps.
	walletauth *walletauth.Service
	// events answers the webhook operations; webhooks is the runner of
	// the deliveries (their own, see workers), signer their key.
	events   *events.Service
	webhooks *jobs.Runner
	signer   *webhooks.Signer
}

// endpointHook hands the platforms' endpoint changes to the events
// service, made after them (it renders with the transfers service).
type endpointHook struct{ events *events.Service }

func (h *endpointHook) WebhookEndpointChanged(ctx context.Context, tx ports.Tx, platformID, endpoint string) error {
	if h.events == nil {
		return nil
	}
	return h.events.WebhookEndpointChanged(ctx, tx, platformID, endpoint)
}

func newServices(b *backend, cfg Config, clock ports.Clock) services {
	ids := system.IDs{}
	hook := &endpointHook{}
	s := services{
		// A new webhook endpoint gets a TEST event and the backlog.
		platforms: platforms.New(b.store, b.ledger, clock, ids, platforms.Sandbox(cfg.Sandbox),
			platforms.OnEndpointChange(hook)),
		customers: customers.New(b.store, b.ledger, clock, ids, customers.Options{UmaDomain: cfg.SandboxUmaDomain, Directory: b.uma}),
		accounts:  accounts.New(b.store, b.ledger, clock, ids, cfg.Sandbox),
		// Webhook deliveries have their own runner (a slow endpoint never
		// holds the rail jobs' handlers).
		runner: jobs.NewRunner(b.store.Read().Jobs(), clock, b.log,
			jobs.WithKinds(ports.JobKinds{Except: []string{ports.EventDeliveryJob}})),
		transfers:    transfers.New(b.store, b.ledger, b.rails, clock, ids, transfers.Options{Logger: b.log}),
		transactions: transactions.New(b.store),
	}
	var verify []external.Option
	if cfg.Sandbox {
		// Sandbox beneficiary verification by identifier suffix; without a
		// verifier every account is UNSUPPORTED.
		verify = append(verify, external.WithVerifier(verifysandbox.Verifier{}))
	}
	s.external = external.New(b.store, clock, ids, verify...)
	// One rate table for lookups, the rate board and quotes.
	rates := fxstatic.Default(clock)
	s.lookup = lookup.New(b.store, rates, clock, ids, lookup.WithRails(b.rails), lookup.WithUmaDirectory(b.uma))
	s.exchangeRates = fx.NewBoard(rates, b.rails)
	s.uma = uma.New(b.store, b.ledger, b.uma, b.rails, clock, ids, cfg.Sandbox)
	// Incoming UMA payments wait for the platform's approval when it has
	// a webhook endpoint; the decision's timeout runs on the job queue.
	s.approvals = approvals.New(b.store, b.ledger, clock, events.PlatformEndpoints{Store: b.store})
	s.uma.SetApprovals(s.approvals)
	s.approvals.Register(s.runner)
	// KYC/KYB: the sandbox provider decides by the spec's suffixes;
	// without the sandbox every complete application waits for manual
	// review (a real provider is a new adapters/kyc/<name> folder).
	var kycProvider ports.KYCProvider = kycmanual.Provider{}
	if cfg.Sandbox {
		kycProvider = kycsandbox.Provider{}
	}
	s.kyc = kyc.New(b.store, kycProvider, clock, ids, kyc.Options{})
	s.customers.SetWatcher(s.kyc)
	s.transfers.Register(s.runner)
	// Embedded-wallet sessions, and the stamps quote executions from a
	// wallet are checked against (the sandbox also takes its literal).
	var otpMailer walletauth.Mailer = mailer.Log{Logger: b.log}
	if cfg.SMTP.Addr != "" {
		otpMailer = cfg.SMTP
	}
	s.walletauth = walletauth.New(b.store, b.single, b.failures, otpMailer, clock, ids, walletauth.Options{
		Sandbox: cfg.Sandbox, Logger: b.log, MasterKey: cfg.WalletMasterKey, ExportKey: cfg.ExportKey,
		OIDCIssuers: issuerNames(cfg.OIDCIssuers), Tokens: b.tokens,
		WebAuthnRPID: cfg.WebAuthnRPID, WebAuthnOrigins: cfg.WebAuthnOrigins})
	s.quotes = quotes.New(b.store, b.ledger, b.rails, rates, s.walletauth, clock, ids,
		quotes.Options{Logger: b.log, Sandbox: cfg.Sandbox})
	s.quotes.Register(s.runner)
	// Deposits (quotes crediting an internal account) wait for the
	// platform's decision like UMA receives; their quotes follow it.
	s.quotes.SetApprovals(s.approvals)
	s.approvals.SetFollower(s.quotes)
	s.invitations = invitations.New(b.store, clock, ids, b.log)
	s.invitations.Register(s.runner)
	s.agents = agents.New(b.store, clock, ids, b.log)
	s.agents.Register(s.runner)
	// agentSpend carries out agents' money-moving actions under their
	// policies; it executes and releases the actions the platform decides.
	s.agentSpend = spend.New(spend.Deps{Store: b.store, Ledger: b.ledger, Agents: s.agents, Quotes: s.quotes,
		Transfers: s.transfers, Usage: b.agentUsage, FX: rates, Clock: clock, IDs: ids, Log: b.log})
	s.agentSpend.Wire(s.runner)
	s.reports = reports.New(b.reports, clock)
	// Webhooks: delivered by their own runner, signed with the
	// deployment's key, rendered as the API renders the resources.
	signer, err := webhooks.NewSigner(cfg.WebhookKey)
	if err != nil {
		panic("webhook signing key: " + err.Error()) // LoadConfig makes or checks it
	}
	s.signer = signer
	deliverer := events.NewDeliverer(b.store, clock, webhooks.NewSender(events.AttemptTimeout), signer,
		httpapi.NewEventRenderer(httpapi.Deps{Transfers: s.transfers, Quotes: s.quotes, Transactions: s.transactions, Agents: s.agents}), events.PlatformEndpoints{Store: b.store}, b.log)
	deliverer.SetApprovals(s.approvals)
	s.events = events.NewService(b.store, clock, ids, deliverer)
	hook.events = s.events
	s.events.Register(s.runner)
	s.webhooks = jobs.NewRunner(b.store.Read().Jobs(), clock, b.log, jobs.WithKinds(ports.JobKinds{Only: []string{ports.EventDeliveryJob}}),
		jobs.WithLease(events.Lease), jobs.WithBatch(b.deliveryClaim),
		jobs.WithBatchGrowth(deliveryClaimGrowth*b.deliveryClaim))
	s.webhooks.HandleBatch(ports.EventDeliveryJob, deliverer.HandleBatch)
	// The orphan-hold reaper is a self-rescheduling job; each start asks
	// for the current slot (a no-op when another instance already did).
	if err := s.transfers.ScheduleReaper(context.Background(), b.store.Read().Jobs(), clock.Now()); err != nil && b.log != nil {
		b.log.Error("schedule the orphan-hold reaper", "err", err)
	}
	return s
}

func newHandler(b *backend, s services, cfg Config, clock ports.Clock, log *slog.Logger) http.Handler {
	return httpapi.New(httpapi.Deps{
		Platforms:      s.platforms,
		Customers:      s.customers,
		Accounts:       s.accounts,
		Transfers:      s.transfers,
		Transactions:   s.transactions,
		External:       s.external,
		Lookup:         s.lookup,
		ExchangeRates:  s.exchangeRates,
		Uma:            s.uma,
		KYC:            s.kyc,
		Quotes:         s.quotes,
		Invitations:    s.invitations,
		Agents:         s.agents,
		AgentSpend:     s.agentSpend,
		Approvals:      s.approvals,
		Reports:        s.reports,
		Operator:       cfg.Operator,
		WalletAuth:     s.walletauth,
		Events:         s.events,
		WebhookKey:     s.signer.PublicKeyPEM(),
		Idempotency:    b.idem,
		Cache:          b.cache,
		Clock:          clock,
		Logger:         log,
		Sandbox:        cfg.Sandbox,
		CursorKey:      cfg.CursorKey,
		MaxBodyBytes:   cfg.MaxBodyBytes,
		IdempotencyTTL: cfg.IdempotencyTTL,
		Ready:          b.ready,

		Observer:               b.metrics,
		Failures:               b.failures,
		AuthFailuresPerToken:   cfg.AuthFailuresPerToken,
		AuthFailuresPerAddress: cfg.AuthFailuresPerAddress,
		AuthFailureWindow:      cfg.AuthFailureWindow,
	})
}

// Command corridor runs the payments service and its admin tasks:
//
//	corridor [serve]                run the API (in-memory sandbox unless DATABASE_URL is set)
//	corridor migrate                apply PostgreSQL migrations and exit
//	corridor platform create ...    provision a platform and print its API credential
//	corridor ledger ...             ledger reports: trial balance, statements, exports, verification
//
// Configuration is by environment variable; see README.md.
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/system"
	"github.com/corridorpay/corridor/ports"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "corridor:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "help", "-h", "-help", "--help":
		// Before the configuration is read: asking for help never starts
		// a server.
		fmt.Fprintln(stdout, usage)
		return nil
	}
	if strings.HasPrefix(cmd, "-") {
		return fmt.Errorf("unknown flag %q: the server takes its settings from the environment (see README.md)\n%s", cmd, usage)
	}
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg)
	switch cmd {
	case "serve":
		return serve(ctx, cfg, log, stdout)
	case "migrate":
		return migrate(ctx, cfg, log)
	case "platform":
		return platformCmd(ctx, cfg, log, args, stdout)
	case "ledger":
		return ledgerCmd(ctx, cfg, log, args, stdout, stderr)
	case "wallet":
		return walletCmd(args, stdout, stderr)
	case "agent":
		return agentCmd(ctx, args, getenv, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

const usage = `usage:
  corridor [serve]                                  run the API server
  corridor migrate                                  apply database migrations (needs DATABASE_URL)
  corridor platform create -name NAME [-uma-domain DOMAIN] [-currencies USD,EUR,...]
                                                    provision a platform and print its credential (needs DATABASE_URL)
  corridor ledger trial-balance|balance|statement|export|verify|checkpoint|keygen [flags]
                                                    ledger reports and checkpoints (needs DATABASE_URL but keygen;
                                                    corridor ledger help)
  corridor wallet keygen|open-session|stamp|open-export [flags]
                                                    the embedded-wallet client (corridor wallet help)
  corridor agent redeem|call|wait [flags]           the agent client: connect with a device code, call /agents/me,
                                                    wait for an approval (corridor agent help)`

func migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if cfg.DatabaseURL == "" {
		return errors.New("migrate needs DATABASE_URL")
	}
	db, err := openMigrated(ctx, cfg.DatabaseURL, log)
	if err != nil {
		return err
	}
	return db.Close()
}

func platformCmd(ctx context.Context, cfg Config, log *slog.Logger, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("usage: corridor platform create -name NAME [-uma-domain DOMAIN] [-currencies USD,EUR]")
	}
	fs := flag.NewFlagSet("platform create", flag.ContinueOnError)
	name := fs.String("name", "", "platform name (required)")
	domain := fs.String("uma-domain", "", "UMA domain of the platform's customers (default: CORRIDOR_SANDBOX_UMA_DOMAIN)")
	curs := fs.String("currencies", "", "comma-separated currencies of the platform's internal accounts")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return errors.New("platform create: -name is required")
	}
	if cfg.DatabaseURL == "" {
		return errors.New("platform create needs DATABASE_URL: an in-memory platform would vanish when this command exits")
	}
	clock := system.Clock{}
	b, err := openBackend(ctx, cfg, clock, log)
	if err != nil {
		return err
	}
	defer b.close()
	s := newServices(b, cfg, clock)
	var currencies []string
	if *curs != "" {
		for _, c := range strings.Split(*curs, ",") {
			currencies = append(currencies, strings.ToUpper(strings.TrimSpace(c)))
		}
	}
	p, err := s.platforms.Create(ctx, *name, or(*domain, cfg.SandboxUmaDomain), currencies)
	if err != nil {
		return fmt.Errorf("platform create: %w", err)
	}
	tokenID, secret, err := s.platforms.IssueCredential(ctx, p.ID, "default")
	if err != nil {
		return fmt.Errorf("platform create: issue credential: %w", err)
	}
	fmt.Fprintf(stdout, "platform id:   %s\ntoken id:      %s\nclient secret: %s\n(the secret is shown once; only its hash is stored)\n", p.ID, tokenID, secret)
	return nil
}

func serve(ctx context.Context, cfg Config, log *slog.Logger, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	clock := system.Clock{}
	b, err := openBackend(ctx, cfg, clock, log)
	if err != nil {
		return err
	}
	defer b.close()
	s := newServices(b, cfg, clock)
	cred, err := bootstrapCredential(ctx, b, s, cfg)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	handler := newHandler(b, s, cfg, clock, log)
	if cfg.MetricsAddr == "" {
		// /metrics beside the API on the main listener (no API credential:
		// firewall it, or give it its own address). Not through a
		// ServeMux, which would answer a path it finds unclean with a
		// bodiless redirect before the API could answer it.
		api, metrics := handler, b.metrics.Handler()
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
				metrics.ServeHTTP(w, r)
				return
			}
			api.ServeHTTP(w, r)
		})
	} else {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen %s (metrics): %w", cfg.MetricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", b.metrics.Handler())
		metricsSrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = metricsSrv.Serve(mln) }()
		defer metricsSrv.Close()
		log.Info("metrics listening", "addr", mln.Addr().String())
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	mode := runMode(cfg)
	fmt.Fprintf(stdout, "corridor is listening (%s)\n  base URL:      http://%s%s\n", mode, ln.Addr(), BasePath)
	fmt.Fprint(stdout, cred)
	fmt.Fprintf(stdout, "  docs:          http://%s%s/docs\n", ln.Addr(), BasePath)
	if cfg.generatedWebhook {
		// A key of this process: print it, platforms verify with it.
		fmt.Fprintf(stdout, "  webhooks are signed with (also GET %s/webhooks/public-key):\n%s", BasePath, s.signer.PublicKeyPEM())
	}
	log.Info("listening", "addr", ln.Addr().String(), "mode", mode, "sandbox", cfg.Sandbox)
	if cfg.generatedCursorKy && b.durable {
		log.Warn("CORRIDOR_CURSOR_KEY is unset: list cursors are valid only on this instance until it restarts")
	}
	logWalletKeys(cfg, log)

	workers := startWorkers(ctx, b, s.runner, s.webhooks, cfg, clock, log)
	if b.revocations != nil {
		// Tokens deleted through other instances stop working here at once.
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go b.revocations(watchCtx, func(id string) { httpapi.ForgetCredential(s.platforms, id) },
			func() { httpapi.ForgetCredentials(s.platforms) })
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		workers.stop()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	workers.stop()
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// bootstrapCredential makes sure the credential the operator configured (or,
// on a fresh store, a generated one) can call the API, and returns the lines
// to print about it.
func bootstrapCredential(ctx context.Context, b *backend, s services, cfg Config) (string, error) {
	if cfg.APITokenID != "" {
		c, err := b.store.Read().Platforms().CredentialByClientID(ctx, cfg.APITokenID)
		switch {
		case err == nil && c.DeletedAt != nil:
			return "", fmt.Errorf("CORRIDOR_API_TOKEN_ID %q was deleted through the API: configure another", cfg.APITokenID)
		case err == nil:
			if _, err := s.platforms.Authenticate(ctx, cfg.APITokenID, cfg.APIClientSecret); err != nil {
				return "", fmt.Errorf("CORRIDOR_API_TOKEN_ID %q exists with a different secret", cfg.APITokenID)
			}
		case errors.Is(err, ports.ErrNotFound):
			p, err := s.platforms.Create(ctx, "default", cfg.SandboxUmaDomain, nil)
			if err != nil {
				return "", fmt.Errorf("bootstrap platform: %w", err)
			}
			if err := s.platforms.AddCredential(ctx, p.ID, "configured", cfg.APITokenID, cfg.APIClientSecret); err != nil {
				return "", fmt.Errorf("bootstrap credential: %w", err)
			}
		default:
			return "", fmt.Errorf("bootstrap credential: %w", err)
		}
		return fmt.Sprintf("  token id:      %s\n  client secret: (from CORRIDOR_API_CLIENT_SECRET)\n", cfg.APITokenID), nil
	}
	if b.durable {
		existing, err := b.store.Read().Platforms().List(ctx)
		if err != nil {
			return "", fmt.Errorf("bootstrap: list platforms: %w", err)
		}
		if len(existing) > 0 {
			return "  credentials:   issue one with `corridor platform create -name NAME`\n", nil
		}
	}
	p, err := s.platforms.Create(ctx, "sandbox", cfg.SandboxUmaDomain, nil)
	if err != nil {
		return "", fmt.Errorf("bootstrap platform: %w", err)
	}
	tokenID, secret, err := s.platforms.IssueCredential(ctx, p.ID, "bootstrap")
	if err != nil {
		return "", fmt.Errorf("bootstrap credential: %w", err)
	}
	return fmt.Sprintf("  platform id:   %s\n  token id:      %s\n  client secret: %s\n  try:           curl -u '%s:%s' http://%s%s/customers\n",
		p.ID, tokenID, secret, tokenID, secret, cfg.Addr, BasePath), nil
}

// runMode names what the service runs on, for the banner and the log:
// "in-memory sandbox" ("in-memory store" with the sandbox off), or the
// PostgreSQL and Redis servers (host, port and database; never a user name
// or password).
func runMode(cfg Config) string {
	if cfg.DatabaseURL == "" && cfg.RedisURL == "" {
		if !cfg.Sandbox {
			return "in-memory store"
		}
		return "in-memory sandbox"
	}
	var parts []string
	if cfg.DatabaseURL != "" {
		parts = append(parts, "PostgreSQL "+serverOf(cfg.DatabaseURL))
	} else {
		parts = append(parts, "in-memory store")
	}
	if cfg.RedisURL != "" {
		parts = append(parts, "Redis "+serverOf(cfg.RedisURL))
	}
	return strings.Join(parts, " + ")
}

// serverOf is a connection URL's host, port and database, without its
// credentials or options; a PostgreSQL socket named by its host
// parameter (as libpq takes it), or a Redis socket named by a unix://
// URL's path (as go-redis takes it, the database from its db parameter),
// stands for the host.
func serverOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.Scheme == "unix" && u.Path != "" {
		db := u.Query().Get("db")
		if db == "" {
			db = "0"
		}
		return "socket " + u.Path + ", database " + db
	}
	if h := u.Query().Get("host"); strings.HasPrefix(h, "/") {
		return "socket " + h + ", database " + strings.TrimPrefix(u.Path, "/")
	}
	if u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Host + u.Path
}

// logWalletKeys says which key signs export bundles (to publish) and warns
// when wallets' secrets cannot be exported or will not outlive the process.
func logWalletKeys(cfg Config, log *slog.Logger) {
	pub, _ := cfg.ExportKey.PublicKey.Bytes()
	if cfg.generatedExport {
		log.Warn("CORRIDOR_EXPORT_SIGNING_KEY is unset: export bundles are signed with a key of this process only",
			"export_public_key", hex.EncodeToString(pub))
	} else {
		log.Info("wallet export bundles are signed with the configured export key", "export_public_key", hex.EncodeToString(pub))
	}
	if cfg.generatedWebhook {
		log.Warn("CORRIDOR_WEBHOOK_SIGNING_KEY is unset: webhooks are signed with a key of this process only (the banner shows it)")
	}
	if cfg.WalletMasterKey == nil {
		log.Warn("CORRIDOR_WALLET_MASTER_KEY is unset: wallet export answers 503")
	}
}

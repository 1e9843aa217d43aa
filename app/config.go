package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	httpapi "github.com/corridorpay/corridor/adapters/http"
	"github.com/corridorpay/corridor/adapters/mailer"
	"github.com/corridorpay/corridor/adapters/oidc"
	"github.com/corridorpay/corridor/adapters/redis"
	"github.com/corridorpay/corridor/core/operator"
	"github.com/corridorpay/corridor/ledger"
)

// Config is everything corridor reads from its environment. README.md's
// configuration table lists the same variables; keep them in step.
type Config struct {
	Addr             string        // CORRIDOR_ADDR
	DatabaseURL      string        // DATABASE_URL; empty = in-memory
	RedisURL         string        // REDIS_URL; empty = in-memory caches
	RedisPrefix      string        // CORRIDOR_REDIS_PREFIX: starts every key this deployment writes in Redis
	APITokenID       string        // CORRIDOR_API_TOKEN_ID
	APIClientSecret  string        // CORRIDOR_API_CLIENT_SECRET
	Sandbox          bool          // CORRIDOR_SANDBOX
	SandboxUmaDomain string        // CORRIDOR_SANDBOX_UMA_DOMAIN
	CursorKey        []byte        // CORRIDOR_CURSOR_KEY
	MaxBodyBytes     int64         // CORRIDOR_MAX_BODY_BYTES
	IdempotencyTTL   time.Duration // CORRIDOR_IDEMPOTENCY_TTL
	ShutdownTimeout  time.Duration // CORRIDOR_SHUTDOWN_TIMEOUT
	LogLevel         slog.Level    // CORRIDOR_LOG_LEVEL
	LogFormat        string        // CORRIDOR_LOG_FORMAT: text or json
	ExpiryInterval   time.Duration // CORRIDOR_HOLD_EXPIRY_INTERVAL
	JobInterval      time.Duration // CORRIDOR_JOB_INTERVAL
	// CORRIDOR_OPERATOR_TOKEN or CORRIDOR_OPERATOR_TOKEN_SHA256: the
	// operator's own credential for the ledger reports (only its digest
	// is kept).
	Operator        *operator.Authenticator
	SettlementDelay time.Duration // CORRIDOR_SANDBOX_SETTLEMENT_DELAY: when a sandbox rail settles
	MetricsAddr     string        // CORRIDOR_METRICS_ADDR: a separate listener for /metrics; empty = the main one
	DBMaxConns      int           // CORRIDOR_DB_MAX_CONNS: the PostgreSQL pool size of one instance
	LedgerShard     int16         // CORRIDOR_LEDGER_SHARD: the journal chain this instance's ledger writer appends to
	CheckpointKey   string        // CORRIDOR_CHECKPOINT_KEY: PEM file of the ledger checkpoint key (ledger checkpoint/verify)
	// CORRIDOR_WALLET_MASTER_KEY (64 hex digits) seals embedded wallets'
	// secrets at rest; CORRIDOR_EXPORT_SIGNING_KEY (a PEM P-256 private
	// key file) signs wallet export bundles. Unset in memory mode: keys of
	// this process only; unset on PostgreSQL: no master key, export is 503.
	WalletMasterKey []byte
	ExportKey       *ecdsa.PrivateKey
	generatedExport bool
	// CORRIDOR_WEBHOOK_SIGNING_KEY (a PEM P-256 private key file) signs
	// webhooks (X-Service-Signature); unset: a key of this process only,
	// whose public key the banner and GET /webhooks/public-key show.
	WebhookKey       *ecdsa.PrivateKey
	generatedWebhook bool
	// CORRIDOR_SMTP_ADDR (host:port), _FROM, _USERNAME, _PASSWORD: the
	// relay one-time passwords are e-mailed through; unset, they go to
	// the log.
	SMTP mailer.SMTP
	// CORRIDOR_AUTH_FAILURES_PER_TOKEN, _PER_ADDRESS and
	// CORRIDOR_AUTH_FAILURE_WINDOW: the authentication throttle.
	AuthFailuresPerToken   int
	AuthFailuresPerAddress int
	AuthFailureWindow      time.Duration
	// CORRIDOR_OIDC_ISSUERS: the accepted OIDC issuers of OAUTH wallet
	// credentials, comma-separated, each "iss" (its JWKS found by
	// discovery) or "iss=jwks-url".
	OIDCIssuers []oidc.Issuer
	// CORRIDOR_WEBAUTHN_RP_ID and CORRIDOR_WEBAUTHN_ORIGINS (comma-
	// separated): the passkeys' relying party.
	WebAuthnRPID      string
	WebAuthnOrigins   []string
	generatedCursorKy bool
}

// DefaultOIDCIssuers are the issuers accepted when CORRIDOR_OIDC_ISSUERS
// is unset.
const DefaultOIDCIssuers = "https://accounts.google.com,https://appleid.apple.com"

// loadWalletAuth reads the OIDC issuers and the WebAuthn relying party.
func (c *Config) loadWalletAuth(getenv func(string) string) error {
	for item := range strings.SplitSeq(or(getenv("CORRIDOR_OIDC_ISSUERS"), DefaultOIDCIssuers), ",") {
		iss, jwks, _ := strings.Cut(strings.TrimSpace(item), "=")
		if iss == "" {
			continue
		}
		if u, err := url.Parse(iss); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("config: CORRIDOR_OIDC_ISSUERS: %q is not an issuer URL", iss)
		}
		c.OIDCIssuers = append(c.OIDCIssuers, oidc.Issuer{Issuer: iss, JWKSURL: jwks})
	}
	c.WebAuthnRPID = or(getenv("CORRIDOR_WEBAUTHN_RP_ID"), "localhost")
	for o := range strings.SplitSeq(or(getenv("CORRIDOR_WEBAUTHN_ORIGINS"), "http://localhost:8080,https://localhost"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.WebAuthnOrigins = append(c.WebAuthnOrigins, o)
		}
	}
	return nil
}

// BasePath is the API's version segment.
const BasePath = "/2025-10-13"

// LoadConfig reads the environment (getenv is os.Getenv outside tests).
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:             or(getenv("CORRIDOR_ADDR"), "127.0.0.1:8080"),
		DatabaseURL:      getenv("DATABASE_URL"),
		RedisURL:         getenv("REDIS_URL"),
		RedisPrefix:      or(getenv("CORRIDOR_REDIS_PREFIX"), redis.DefaultPrefix),
		APITokenID:       getenv("CORRIDOR_API_TOKEN_ID"),
		APIClientSecret:  getenv("CORRIDOR_API_CLIENT_SECRET"),
		SandboxUmaDomain: or(getenv("CORRIDOR_SANDBOX_UMA_DOMAIN"), "sandbox.local"),
		LogFormat:        or(getenv("CORRIDOR_LOG_FORMAT"), "text"),
		MetricsAddr:      getenv("CORRIDOR_METRICS_ADDR"),
		CheckpointKey:    getenv("CORRIDOR_CHECKPOINT_KEY"),
		SMTP: mailer.SMTP{Addr: getenv("CORRIDOR_SMTP_ADDR"), From: getenv("CORRIDOR_SMTP_FROM"),
			Username: getenv("CORRIDOR_SMTP_USERNAME"), Password: getenv("CORRIDOR_SMTP_PASSWORD")},
	}
	var err error
	if c.Sandbox, err = parseBool("CORRIDOR_SANDBOX", or(getenv("CORRIDOR_SANDBOX"), "true")); err != nil {
		return c, err
	}
	if c.MaxBodyBytes, err = strconv.ParseInt(or(getenv("CORRIDOR_MAX_BODY_BYTES"), "1048576"), 10, 64); err != nil || c.MaxBodyBytes <= 0 {
		return c, fmt.Errorf("config: CORRIDOR_MAX_BODY_BYTES must be a positive integer")
	}
	if c.DBMaxConns, err = strconv.Atoi(or(getenv("CORRIDOR_DB_MAX_CONNS"), "32")); err != nil || c.DBMaxConns < 2 || c.DBMaxConns > 1000 {
		return c, fmt.Errorf("config: CORRIDOR_DB_MAX_CONNS must be an integer from 2 to 1000")
	}
	shard, err := strconv.ParseInt(or(getenv("CORRIDOR_LEDGER_SHARD"), "0"), 10, 16)
	if err != nil || shard < 0 || shard > ledger.MaxShard {
		return c, fmt.Errorf("config: CORRIDOR_LEDGER_SHARD must be an integer from 0 to %d", ledger.MaxShard)
	}
	c.LedgerShard = int16(shard)
	if c.AuthFailuresPerToken, err = strconv.Atoi(or(getenv("CORRIDOR_AUTH_FAILURES_PER_TOKEN"), "20")); err != nil || c.AuthFailuresPerToken < 1 {
		return c, fmt.Errorf("config: CORRIDOR_AUTH_FAILURES_PER_TOKEN must be a positive integer")
	}
	if c.AuthFailuresPerAddress, err = strconv.Atoi(or(getenv("CORRIDOR_AUTH_FAILURES_PER_ADDRESS"), "100")); err != nil || c.AuthFailuresPerAddress < 1 {
		return c, fmt.Errorf("config: CORRIDOR_AUTH_FAILURES_PER_ADDRESS must be a positive integer")
	}
	if c.AuthFailureWindow, err = parseDuration("CORRIDOR_AUTH_FAILURE_WINDOW", or(getenv("CORRIDOR_AUTH_FAILURE_WINDOW"), "1m")); err != nil {
		return c, err
	}
	if c.IdempotencyTTL, err = parseDuration("CORRIDOR_IDEMPOTENCY_TTL", or(getenv("CORRIDOR_IDEMPOTENCY_TTL"), "24h")); err != nil {
		return c, err
	}
	if c.IdempotencyTTL < 24*time.Hour {
		return c, fmt.Errorf("config: CORRIDOR_IDEMPOTENCY_TTL must be at least 24h (keys are kept at least a day)")
	}
	if c.ShutdownTimeout, err = parseDuration("CORRIDOR_SHUTDOWN_TIMEOUT", or(getenv("CORRIDOR_SHUTDOWN_TIMEOUT"), "15s")); err != nil {
		return c, err
	}
	if c.ExpiryInterval, err = parseDuration("CORRIDOR_HOLD_EXPIRY_INTERVAL", or(getenv("CORRIDOR_HOLD_EXPIRY_INTERVAL"), "1s")); err != nil {
		return c, err
	}
	if c.JobInterval, err = parseDuration("CORRIDOR_JOB_INTERVAL", or(getenv("CORRIDOR_JOB_INTERVAL"), "250ms")); err != nil {
		return c, err
	}
	if c.SettlementDelay, err = parseDuration("CORRIDOR_SANDBOX_SETTLEMENT_DELAY", or(getenv("CORRIDOR_SANDBOX_SETTLEMENT_DELAY"), "2s")); err != nil {
		return c, err
	}
	if err := c.LogLevel.UnmarshalText([]byte(or(getenv("CORRIDOR_LOG_LEVEL"), "info"))); err != nil {
		return c, fmt.Errorf("config: CORRIDOR_LOG_LEVEL: %w", err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf("config: CORRIDOR_LOG_FORMAT must be text or json")
	}
	if (c.APITokenID == "") != (c.APIClientSecret == "") {
		return c, fmt.Errorf("config: set both CORRIDOR_API_TOKEN_ID and CORRIDOR_API_CLIENT_SECRET, or neither")
	}
	if c.APIClientSecret != "" && len(c.APIClientSecret) < 16 {
		return c, fmt.Errorf("config: CORRIDOR_API_CLIENT_SECRET must be at least 16 characters")
	}
	if c.Operator, err = operator.New(getenv("CORRIDOR_OPERATOR_TOKEN"), getenv("CORRIDOR_OPERATOR_TOKEN_SHA256")); err != nil {
		return c, fmt.Errorf("config: CORRIDOR_OPERATOR_TOKEN: %w", err)
	}
	if err := c.loadWalletKeys(getenv); err != nil {
		return c, err
	}
	if err := c.loadWalletAuth(getenv); err != nil {
		return c, err
	}
	if c.SMTP.Addr != "" && c.SMTP.From == "" {
		return c, fmt.Errorf("config: CORRIDOR_SMTP_ADDR needs CORRIDOR_SMTP_FROM")
	}
	if k := getenv("CORRIDOR_CURSOR_KEY"); k != "" {
		if len(k) < 16 {
			return c, fmt.Errorf("config: CORRIDOR_CURSOR_KEY must be at least 16 characters")
		}
		c.CursorKey = []byte(k)
	} else {
		c.CursorKey = make([]byte, 32)
		_, _ = rand.Read(c.CursorKey)
		c.generatedCursorKy = true
	}
	return c, nil
}

func or(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

func parseBool(name, v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("config: %s must be true or false", name)
	}
	return b, nil
}

func parseDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("config: %s must be a positive duration like 30s", name)
	}
	return d, nil
}

func newLogger(c Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, opts)
	if c.LogFormat == "json" {
		h = slog.NewJSONHandler(os.Stderr, opts)
	}
	// A line logged with a request's context names the request.
	return slog.New(httpapi.ContextLogHandler(h))
}

// loadWalletKeys reads the wallet master key and the export signing key.
func (c *Config) loadWalletKeys(getenv func(string) string) error {
	if k := getenv("CORRIDOR_WALLET_MASTER_KEY"); k != "" {
		b, err := hex.DecodeString(k)
		if err != nil || len(b) != 32 {
			return fmt.Errorf("config: CORRIDOR_WALLET_MASTER_KEY must be 64 hex digits (32 bytes)")
		}
		c.WalletMasterKey = b
	} else if c.DatabaseURL == "" {
		c.WalletMasterKey = make([]byte, 32) // memory mode: secrets live and die with the process
		_, _ = rand.Read(c.WalletMasterKey)
	}
	var err error
	if c.ExportKey, c.generatedExport, err = loadP256Key(getenv, "CORRIDOR_EXPORT_SIGNING_KEY"); err != nil {
		return err
	}
	if c.WebhookKey, c.generatedWebhook, err = loadP256Key(getenv, "CORRIDOR_WEBHOOK_SIGNING_KEY"); err != nil {
		return err
	}
	return nil
}

// loadP256Key reads the PEM P-256 private key (PKCS #8 or SEC 1) of the
// file the variable name names, or makes one for this process when unset
// (generated true).
func loadP256Key(getenv func(string) string, name string) (key *ecdsa.PrivateKey, generated bool, err error) {
	if path := getenv(name); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, false, fmt.Errorf("config: %s: %w", name, err)
		}
		block, _ := pem.Decode(b)
		if block == nil {
			return nil, false, fmt.Errorf("config: %s: %s holds no PEM block", name, path)
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			if k, err = x509.ParseECPrivateKey(block.Bytes); err != nil {
				return nil, false, fmt.Errorf("config: %s: %w", name, err)
			}
		}
		ek, ok := k.(*ecdsa.PrivateKey)
		if !ok || ek.Curve != elliptic.P256() {
			return nil, false, fmt.Errorf("config: %s must be a P-256 key", name)
		}
		return ek, false, nil
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, false, err
	}
	return ek, true, nil
}

// Package redis implements corridor's caches on Redis: the idempotency
// response cache (fast replays; the database stays authoritative) and
// single-use values with a TTL (signed-retry request ids, WebAuthn
// challenges, OTPs), consumed atomically with GETDEL.
package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/corridorpay/corridor/ports"
)

// DefaultPrefix starts every key the client writes.
const DefaultPrefix = "corridor:"

// Client is a connection pool to one Redis. ResponseCache and SingleUse give
// the two ports it implements (their Put methods differ); Ping serves
// /readyz.
type Client struct {
	rdb    *goredis.Client
	prefix string
}

var _ ports.Pinger = (*Client)(nil)

// Option configures a Client.
type Option func(*Client)

// WithPrefix sets the prefix of every key (DefaultPrefix otherwise), so
// several deployments or tests can share one Redis.
func WithPrefix(prefix string) Option { return func(c *Client) { c.prefix = prefix } }

// WithHook adds a go-redis hook (metrics count failed commands with one).
func WithHook(h goredis.Hook) Option { return func(c *Client) { c.rdb.AddHook(h) } }

// callBound is how long a call without a deadline of its own waits for
// Redis to connect, take the command, or answer (each), by default. Redis
// answers in well under a millisecond on a healthy network; past this it
// cannot serve the request now.
const callBound = time.Second

// New parses url (redis://[user:password@]host:port/db, rediss:// for
// TLS, or unix://[user:password@]/path/to/socket?db=N) and returns a
// client. It does not connect: call Ping to check.
func New(url string, opts ...Option) (*Client, error) {
	o, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: parse url: %w", err)
	}
	// Every call ends by its caller's deadline or cancellation: by default
	// the client ignores the context and waits out its own timeouts
	// (seconds), which a stalled Redis made every request wait (the HTTP
	// layer gives the calls it can do without a short deadline).
	o.ContextTimeoutEnabled = true
	// A call whose caller set no deadline (a request that needs Redis)
	// waits at most callBound for each step, unless the URL sets its own
	// (dial_timeout, read_timeout, write_timeout; 0, as when absent, means
	// the default): go-redis's defaults made such a request wait 5 s for
	// its 503 when Redis stalled.
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout} {
		if *d == 0 {
			*d = callBound
		}
	}
	// No CLIENT SETINFO and no CLIENT MAINT_NOTIFICATIONS on each new
	// connection: Redis before 7.2 refuses the first, and a Redis that is
	// not a managed cluster the second, and every refusal counted as a
	// failed command (the metrics' corridor_redis_errors_total, which the
	// README alerts on) on a healthy server. The first only names the
	// library to CLIENT LIST; the second serves managed clusters' upgrade
	// notices (a URL's own setting is kept).
	o.DisableIdentity = true
	if o.MaintNotificationsConfig == nil {
		o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	}
	c := &Client{rdb: goredis.NewClient(o), prefix: DefaultPrefix}
	for _, opt := range opts {
		opt(c)
	}
	return c, nil
}

// Prefix returns the prefix of every key the client writes.
func (c *Client) Prefix() string { return c.prefix }

// Close closes the pool.
func (c *Client) Close() error { return c.rdb.Close() }

// Ping checks Redis answers.
func (c *Client) Ping(ctx context.Context) error {
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		return failed("ping", err)
	}
	return nil
}

// failed is the error of a Redis command that failed: "redis: <what>: err",
// marked ports.ErrUnavailable when Redis did not answer in time (the
// caller's deadline, or the client's own timeout), so a request that needs
// it is answered 503 with Retry-After, as for a refused connection, not
// 500.
func failed(what string, err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("redis: %s: %w: %w", what, ports.ErrUnavailable, err)
	}
	return fmt.Errorf("redis: %s: %w", what, err)
}

// errTTL refuses a non-positive TTL (Redis would reject it, or keep the key
// forever).
var errTTL = errors.New("redis: ttl must be positive")

// ResponseCache returns the client as a ports.ResponseCache.
func (c *Client) ResponseCache() *ResponseCache { return &ResponseCache{c: c} }

// SingleUse returns the client as a ports.SingleUse.
func (c *Client) SingleUse() *SingleUse { return &SingleUse{c: c} }

// ---- response cache ----

// ResponseCache stores whole idempotency records as JSON under
// <prefix>idem:<len(scope)>:<scope>:<key>, with a TTL. The scope's length
// keeps "a:b"+"c" and "a"+"b:c" apart.
type ResponseCache struct{ c *Client }

var _ ports.ResponseCache = (*ResponseCache)(nil)

func (r *ResponseCache) key(scope, key string) string {
	return r.c.prefix + "idem:" + strconv.Itoa(len(scope)) + ":" + scope + ":" + key
}

// record is the cached form of ports.IdempotencyRecord.
type record struct {
	Scope       string            `json:"scope"`
	Key         string            `json:"key"`
	RequestHash string            `json:"requestHash"`
	Completed   bool              `json:"completed"`
	StatusCode  int               `json:"statusCode"`
	Header      map[string]string `json:"header"`
	Body        []byte            `json:"body"`
	LockedUntil time.Time         `json:"lockedUntil"`
	CreatedAt   time.Time         `json:"createdAt"`
	ExpiresAt   time.Time         `json:"expiresAt"`
}

// Get returns the cached record, if any.
func (r *ResponseCache) Get(ctx context.Context, scope, key string) (ports.IdempotencyRecord, bool, error) {
	b, err := r.c.rdb.Get(ctx, r.key(scope, key)).Bytes()
	if errors.Is(err, goredis.Nil) {
		return ports.IdempotencyRecord{}, false, nil
	}
	if err != nil {
		return ports.IdempotencyRecord{}, false, failed("get response "+scope+"/"+key, err)
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return ports.IdempotencyRecord{}, false, fmt.Errorf("redis: decode response %s/%s: %w", scope, key, err)
	}
	return ports.IdempotencyRecord{
		Scope: rec.Scope, Key: rec.Key, RequestHash: rec.RequestHash, Completed: rec.Completed,
		StatusCode: rec.StatusCode, Header: rec.Header, Body: rec.Body,
		LockedUntil: ports.Stored(rec.LockedUntil), CreatedAt: ports.Stored(rec.CreatedAt), ExpiresAt: ports.Stored(rec.ExpiresAt),
	}, true, nil
}

// Put caches rec for ttl, replacing any earlier entry.
func (r *ResponseCache) Put(ctx context.Context, rec ports.IdempotencyRecord, ttl time.Duration) error {
	if ttl <= 0 {
		return errTTL
	}
	b, err := json.Marshal(record{
		Scope: rec.Scope, Key: rec.Key, RequestHash: rec.RequestHash, Completed: rec.Completed,
		StatusCode: rec.StatusCode, Header: rec.Header, Body: rec.Body,
		LockedUntil: ports.Stored(rec.LockedUntil), CreatedAt: ports.Stored(rec.CreatedAt), ExpiresAt: ports.Stored(rec.ExpiresAt),
	})
	if err != nil {
		return fmt.Errorf("redis: encode response %s/%s: %w", rec.Scope, rec.Key, err)
	}
	if err := r.c.rdb.Set(ctx, r.key(rec.Scope, rec.Key), b, ttl).Err(); err != nil {
		return failed("put response "+rec.Scope+"/"+rec.Key, err)
	}
	return nil
}

// ---- single-use values ----

// SingleUse stores values under <prefix>once:<key> with SET … PX and
// consumes them with GETDEL, so of concurrent consumers exactly one gets
// the value.
type SingleUse struct{ c *Client }

var _ ports.SingleUse = (*SingleUse)(nil)

func (s *SingleUse) key(key string) string { return s.c.prefix + "once:" + key }

// Put stores value under key for ttl, replacing any earlier value.
func (s *SingleUse) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errTTL
	}
	if err := s.c.rdb.Set(ctx, s.key(key), value, ttl).Err(); err != nil {
		return failed("put single-use "+key, err)
	}
	return nil
}

// Consume returns the value and deletes it in one command.
func (s *SingleUse) Consume(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := s.c.rdb.GetDel(ctx, s.key(key)).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, failed("consume single-use "+key, err)
	}
	return b, true, nil
}

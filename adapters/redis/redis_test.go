package redis_test

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/redis"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit/cachetest"
)

func redisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// newClient returns a client whose keys carry a prefix unique to the test,
// and a raw client on the same Redis. An unreachable Redis fails the test.
func newClient(t *testing.T) (*redis.Client, *goredis.Client) {
	t.Helper()
	prefix := "corridor-test:" + uuid.NewString() + ":"
	c, err := redis.New(redisURL(), redis.WithPrefix(prefix))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		_ = c.Close()
		t.Fatalf("Redis unreachable at %s: %v", redisURL(), err)
	}
	o, err := goredis.ParseURL(redisURL())
	require.NoError(t, err)
	raw := goredis.NewClient(o)
	t.Cleanup(func() {
		ctx := context.Background()
		for _, k := range keys(t, raw, prefix) {
			raw.Del(ctx, k)
		}
		_ = raw.Close()
		_ = c.Close()
	})
	return c, raw
}

func keys(t *testing.T, raw *goredis.Client, prefix string) []string {
	t.Helper()
	var out []string
	iter := raw.Scan(context.Background(), 0, prefix+"*", 100).Iterator()
	for iter.Next(context.Background()) {
		out = append(out, iter.Val())
	}
	require.NoError(t, iter.Err())
	return out
}

// advance moves time forward for the client's keys without sleeping: every
// key's remaining TTL is shortened by d, and keys that reach zero are
// deleted, as Redis would expire them. A key without a TTL keeps living, so
// an adapter that forgot the TTL fails the suite.
func advance(t *testing.T, c *redis.Client, raw *goredis.Client) cachetest.Advance {
	return func(d time.Duration) {
		ctx := context.Background()
		for _, k := range keys(t, raw, c.Prefix()) {
			ttl, err := raw.PTTL(ctx, k).Result()
			require.NoError(t, err)
			switch {
			case ttl < 0: // no TTL (-1), or gone (-2)
			case ttl <= d:
				require.NoError(t, raw.Del(ctx, k).Err())
			default:
				require.NoError(t, raw.PExpire(ctx, k, ttl-d).Err())
			}
		}
	}
}

func TestResponseCacheContract(t *testing.T) {
	cachetest.RunResponseCache(t, func(t *testing.T) (ports.ResponseCache, cachetest.Advance) {
		c, raw := newClient(t)
		return c.ResponseCache(), advance(t, c, raw)
	})
}

func TestSingleUseContract(t *testing.T) {
	cachetest.RunSingleUse(t, func(t *testing.T) (ports.SingleUse, cachetest.Advance) {
		c, raw := newClient(t)
		return c.SingleUse(), advance(t, c, raw)
	})
}

func TestPing(t *testing.T) {
	c, _ := newClient(t)
	require.NoError(t, c.Ping(context.Background()))

	bad, err := redis.New("redis://127.0.0.1:1/0")
	require.NoError(t, err)
	defer bad.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	assert.Error(t, bad.Ping(ctx), "nothing listens on port 1")

	_, err = redis.New("not a url")
	assert.Error(t, err)
}

// TestKeysAndTTLs checks what lands in Redis: one key per value under the
// prefix, with the TTL set in milliseconds.
func TestKeysAndTTLs(t *testing.T) {
	ctx := context.Background()
	c, raw := newClient(t)

	// 15.5 s: in milliseconds, and long enough that a loaded machine does
	// not see it expire before the key count below (1.5 s did).
	require.NoError(t, c.SingleUse().Put(ctx, "challenge:1", []byte("v"), 15500*time.Millisecond))
	k := c.Prefix() + "once:challenge:1"
	ttl, err := raw.PTTL(ctx, k).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 15*time.Second)
	assert.LessOrEqual(t, ttl, 15500*time.Millisecond)
	v, err := raw.Get(ctx, k).Result()
	require.NoError(t, err)
	assert.Equal(t, "v", v)

	rec := ports.IdempotencyRecord{Scope: "tok_1", Key: "k:1", Completed: true, StatusCode: 200, Body: []byte("{}")}
	require.NoError(t, c.ResponseCache().Put(ctx, rec, time.Hour))
	k = c.Prefix() + "idem:5:tok_1:k:1"
	ttl, err = raw.PTTL(ctx, k).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 59*time.Minute)

	got := keys(t, raw, c.Prefix())
	assert.Len(t, got, 2)
	for _, key := range got {
		assert.True(t, strings.HasPrefix(key, c.Prefix()))
	}
}

// TestRealExpiry lets Redis itself expire short-lived values.
func TestRealExpiry(t *testing.T) {
	ctx := context.Background()
	c, raw := newClient(t)
	require.NoError(t, c.SingleUse().Put(ctx, "otp", []byte("123456"), 100*time.Millisecond))
	rec := ports.IdempotencyRecord{Scope: "tok", Key: "k", Completed: true, StatusCode: 201}
	require.NoError(t, c.ResponseCache().Put(ctx, rec, 100*time.Millisecond))
	_, ok, err := c.ResponseCache().Get(ctx, "tok", "k")
	require.NoError(t, err)
	require.True(t, ok)

	require.Eventually(t, func() bool {
		return raw.Exists(ctx, c.Prefix()+"once:otp").Val() == 0
	}, 2*time.Second, 10*time.Millisecond)
	_, ok, err = c.SingleUse().Consume(ctx, "otp")
	require.NoError(t, err)
	assert.False(t, ok)
	require.Eventually(t, func() bool {
		_, ok, err := c.ResponseCache().Get(ctx, "tok", "k")
		return err == nil && !ok
	}, 2*time.Second, 10*time.Millisecond)
}

// TestPrefixesIsolate: two clients with different prefixes share nothing.
func TestPrefixesIsolate(t *testing.T) {
	ctx := context.Background()
	a, _ := newClient(t)
	b, _ := newClient(t)
	require.NoError(t, a.SingleUse().Put(ctx, "k", []byte("a"), time.Minute))
	_, ok, err := b.SingleUse().Consume(ctx, "k")
	require.NoError(t, err)
	assert.False(t, ok)
	v, ok, err := a.SingleUse().Consume(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []byte("a"), v)
}

func TestFailureCounterContract(t *testing.T) {
	cachetest.RunFailureCounter(t, func(t *testing.T) (ports.FailureCounter, cachetest.Advance) {
		c, raw := newClient(t)
		return c.FailureCounter(), advance(t, c, raw)
	})
}

// blackHole accepts connections and reads what they send, answering
// nothing: a Redis that has stalled (paused, overloaded, or behind a
// network path that drops its replies).
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { _ = ln.Close(); <-done })
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return "redis://" + ln.Addr().String() + "/0"
}

// Every call ends by its caller's deadline, however long the client's own
// timeouts, and says the service is unavailable: the response cache's
// reads and writes are bounded that way by the HTTP layer (a request does
// without them). Before, the client ignored
// the context and a stalled Redis held each call for its read timeout
// (3 s) or more.
func TestACallEndsByItsCallersDeadline(t *testing.T) {
	c, err := redis.New(blackHole(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	calls := map[string]func(context.Context) error{
		"cache get": func(ctx context.Context) error {
			_, _, err := c.ResponseCache().Get(ctx, "scope", "key")
			return err
		},
		"cache put": func(ctx context.Context) error {
			return c.ResponseCache().Put(ctx, ports.IdempotencyRecord{Scope: "scope", Key: "key", Completed: true}, time.Minute)
		},
		"failure counts": func(ctx context.Context) error {
			_, err := c.FailureCounter().Failures(ctx, "token", "address")
			return err
		},
		"single-use consume": func(ctx context.Context) error {
			_, _, err := c.SingleUse().Consume(ctx, "id")
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := call(ctx)
			require.Error(t, err)
			assert.Less(t, time.Since(start), 2*time.Second, "ended near its 100 ms deadline: %v", err)
			// A Redis that does not answer cannot take the work now: the
			// API says 503 with Retry-After, not 500.
			assert.ErrorIs(t, err, ports.ErrUnavailable)
		})
	}
}

// A call whose caller set no deadline (a request that needs Redis, such
// as a wallet challenge's single-use value) ends within the client's own
// bound when Redis does not answer, and says the service is unavailable;
// the URL's own timeouts, when it sets them, are the bound instead. With
// go-redis's defaults it took 5.0 s.
func TestACallWithoutADeadlineEndsWithinTheClientsBound(t *testing.T) {
	for name, tc := range map[string]struct {
		query    string
		min, max time.Duration
	}{
		"default":       {"", 900 * time.Millisecond, 2 * time.Second},
		"the URL's own": {"?read_timeout=200ms&write_timeout=200ms&dial_timeout=200ms", 0, 800 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := redis.New(blackHole(t) + tc.query)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			start := time.Now()
			_, _, err = c.SingleUse().Consume(context.Background(), "id")
			took := time.Since(start)
			require.Error(t, err)
			assert.ErrorIs(t, err, ports.ErrUnavailable)
			assert.GreaterOrEqual(t, took, tc.min)
			assert.Less(t, took, tc.max)
		})
	}
}

// failedCommands is a hook that records the name of every command that
// fails, as the metrics' hook counts them.
type failedCommands struct{ names []string }

func (h *failedCommands) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *failedCommands) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil && err != goredis.Nil {
			h.names = append(h.names, cmd.Name())
		}
		return err
	}
}

func (h *failedCommands) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if c.Err() != nil && c.Err() != goredis.Nil {
				h.names = append(h.names, c.Name())
			}
		}
		return err
	}
}

// A new connection makes no command fail: go-redis's CLIENT SETINFO, which
// Redis before 7.2 refuses, would count as a failed command on every
// connection (and fire the README's Redis alert on a healthy server).
func TestANewConnectionFailsNoCommand(t *testing.T) {
	hook := &failedCommands{}
	c, err := redis.New(redisURL(), redis.WithHook(hook))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, c.Ping(ctx))
	assert.Empty(t, hook.names)
}

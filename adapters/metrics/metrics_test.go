package metrics_test

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/metrics"
)

func TestRedisHookCountsFailuresNotMisses(t *testing.T) {
	m := metrics.New()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	o, err := goredis.ParseURL(url)
	require.NoError(t, err)
	up := goredis.NewClient(o)
	up.AddHook(m.RedisHook())
	t.Cleanup(func() { _ = up.Close() })
	// A missing key is not a failure.
	require.ErrorIs(t, up.Get(context.Background(), "corridor-test:metrics:missing").Err(), goredis.Nil)

	// A Redis nobody answers at: every command fails.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	down := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	down.AddHook(m.RedisHook())
	t.Cleanup(func() { _ = down.Close() })
	require.Error(t, down.Get(context.Background(), "k").Err())
	pipe := down.Pipeline()
	pipe.Incr(context.Background(), "a")
	pipe.PTTL(context.Background(), "a")
	_, err = pipe.Exec(context.Background())
	require.Error(t, err)

	n, err := testutil.GatherAndCount(m.Registry(), "corridor_redis_errors_total")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, 3, "dial, get and the pipeline's commands counted")
	assert.Equal(t, 1.0, counterValue(t, m, "get"), "the failed GET; the miss on the live Redis is not counted")
	assert.Equal(t, 1.0, counterValue(t, m, "incr"), "a pipeline's commands are counted")
}

// counterValue is corridor_redis_errors_total{command=name}.
func counterValue(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	require.NoError(t, err)
	var v float64
	for _, mf := range mfs {
		if mf.GetName() != "corridor_redis_errors_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "command" && l.GetValue() == name {
					v += s.GetCounter().GetValue()
				}
			}
		}
	}
	return v
}

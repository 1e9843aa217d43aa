package httpapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/corridorpay/corridor/core/platforms"
)

func TestCredCache(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := &credCache{ttl: 5 * time.Second, max: 3, now: func() time.Time { return now }, m: map[credKey]credEntry{}}
	svcA, svcB := &platforms.Service{}, &platforms.Service{}
	p := Principal{PlatformID: "Platform:a", TokenID: "tok_a"}
	key := credKey{svc: svcA, hash: credHash("tok_a", "secret")}
	c.put(key, p)

	assert.Equal(t, p, c.get(key), "a verified credential is remembered")
	assert.Zero(t, c.get(credKey{svc: svcA, hash: credHash("tok_a", "wrong")}), "another secret is not")
	assert.Zero(t, c.get(credKey{svc: svcA, hash: credHash("tok_a:", "secret")}), "the token id and secret are kept apart")
	assert.Zero(t, c.get(credKey{svc: svcB, hash: credHash("tok_a", "secret")}), "another server's service is not")

	now = now.Add(5 * time.Second)
	assert.Equal(t, p, c.get(key), "still fresh at the TTL")
	now = now.Add(time.Nanosecond)
	assert.Zero(t, c.get(key), "expired after the TTL")
	assert.Empty(t, c.m, "an expired entry is dropped")

	for i, s := range []string{"1", "2", "3", "4"} {
		c.put(credKey{svc: svcA, hash: credHash("tok_"+s, s)}, p)
		assert.LessOrEqual(t, len(c.m), 3, "put %d", i)
	}
	assert.Equal(t, p, c.get(credKey{svc: svcA, hash: credHash("tok_4", "4")}), "the latest entry survives a clear")
}

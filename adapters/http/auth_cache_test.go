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
	p := Principal{PlatformID: "Platform:a", ClientID: "tok_a"}
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

// A deleted token's entries are forgotten, and a verification that began
// before the deletion is not cached after it.
func TestCredCacheForget(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := &credCache{ttl: 5 * time.Second, max: 10, now: func() time.Time { return now }, m: map[credKey]credEntry{}}
	svcA, svcB := &platforms.Service{}, &platforms.Service{}
	gone, kept := Principal{PlatformID: "Platform:a", ClientID: "tok_gone"}, Principal{PlatformID: "Platform:a", ClientID: "tok_kept"}
	goneKey, keptKey := credKey{svc: svcA, hash: credHash("tok_gone", "s")}, credKey{svc: svcA, hash: credHash("tok_kept", "s")}
	otherSvc := credKey{svc: svcB, hash: credHash("tok_gone", "s")}
	c.put(goneKey, gone)
	c.put(keptKey, kept)
	c.put(otherSvc, gone)

	gen := c.generation() // a verification of tok_gone starts…
	c.forget(svcA, "tok_gone")
	assert.Zero(t, c.get(goneKey), "the deleted token is forgotten")
	assert.Equal(t, kept, c.get(keptKey), "other tokens are kept")
	assert.Equal(t, gone, c.get(otherSvc), "another server's service is its own")

	c.putSince(goneKey, gone, gen) // …and ends after the deletion
	assert.Zero(t, c.get(goneKey), "a verification older than the deletion is not cached")
	c.putSince(goneKey, gone, c.generation())
	assert.Equal(t, gone, c.get(goneKey), "a verification after it is")
}

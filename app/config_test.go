package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigDefaults(t *testing.T) {
	c, err := LoadConfig(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", c.Addr)
	assert.True(t, c.Sandbox)
	assert.Equal(t, "sandbox.local", c.SandboxUmaDomain)
	assert.Equal(t, 24*time.Hour, c.IdempotencyTTL)
	assert.Len(t, c.CursorKey, 32)
	assert.Empty(t, c.DatabaseURL)
	assert.Equal(t, 250*time.Millisecond, c.JobInterval)
	assert.Zero(t, c.LedgerShard)
	c, err = LoadConfig(env(map[string]string{"CORRIDOR_LEDGER_SHARD": "3"}))
	require.NoError(t, err)
	assert.Equal(t, int16(3), c.LedgerShard)
}

func TestConfigRejectsBadValues(t *testing.T) {
	for name, m := range map[string]map[string]string{
		"half a credential":  {"CORRIDOR_API_TOKEN_ID": "x"},
		"short secret":       {"CORRIDOR_API_TOKEN_ID": "x", "CORRIDOR_API_CLIENT_SECRET": "short"},
		"ttl under a day":    {"CORRIDOR_IDEMPOTENCY_TTL": "1h"},
		"bad duration":       {"CORRIDOR_SHUTDOWN_TIMEOUT": "soon"},
		"bad bool":           {"CORRIDOR_SANDBOX": "maybe"},
		"bad body limit":     {"CORRIDOR_MAX_BODY_BYTES": "-1"},
		"bad log format":     {"CORRIDOR_LOG_FORMAT": "xml"},
		"bad log level":      {"CORRIDOR_LOG_LEVEL": "loud"},
		"short cursor key":   {"CORRIDOR_CURSOR_KEY": "abc"},
		"bad job interval":   {"CORRIDOR_JOB_INTERVAL": "0s"},
		"negative shard":     {"CORRIDOR_LEDGER_SHARD": "-1"},
		"shard too large":    {"CORRIDOR_LEDGER_SHARD": "1024"},
		"shard not a number": {"CORRIDOR_LEDGER_SHARD": "one"},
	} {
		_, err := LoadConfig(env(m))
		assert.Error(t, err, name)
	}
}

func TestRunModeNamesServersWithoutCredentials(t *testing.T) {
	require.Equal(t, "in-memory sandbox", runMode(Config{Sandbox: true}))
	require.Equal(t, "in-memory store", runMode(Config{}), "the sandbox off")
	mode := runMode(Config{DatabaseURL: "postgres://app:s3cret@db.internal:5433/corridor?sslmode=require",
		RedisURL: "redis://:pw@cache:6379/2"})
	require.Equal(t, "PostgreSQL db.internal:5433/corridor + Redis cache:6379/2", mode)
	require.NotContains(t, mode, "s3cret")
	require.Equal(t, "in-memory store + Redis cache:6379/2", runMode(Config{RedisURL: "redis://cache:6379/2"}))
	socket := runMode(Config{DatabaseURL: "postgres://app:s3cret@/corridor?host=/var/run/postgresql"})
	require.Equal(t, "PostgreSQL socket /var/run/postgresql, database corridor", socket)
	redisSocket := runMode(Config{RedisURL: "unix://:pw@/run/redis/redis.sock?db=3"})
	require.Equal(t, "in-memory store + Redis socket /run/redis/redis.sock, database 3", redisSocket)
	require.NotContains(t, redisSocket, "pw")
	require.Equal(t, "in-memory store + Redis socket /run/redis/redis.sock, database 0",
		runMode(Config{RedisURL: "unix:///run/redis/redis.sock"}))
}

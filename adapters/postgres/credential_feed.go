package postgres

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// credentialChannel is the NOTIFY channel on which a deleted API token's
// client id is announced, from the transaction that deletes it
// (DeleteCredential): PostgreSQL delivers it to every listening session
// when that transaction commits, and never for one that rolls back.
const credentialChannel = "corridor_credential_revoked"

// WatchCredentialRevocations listens, until ctx ends, for the API tokens
// deleted through any instance on db, and calls forget with each one's
// client id, so an instance that remembers verified credentials (the HTTP
// layer's cache) drops a deleted token at once instead of when its entry
// expires. After a broken connection, notifications may have been missed:
// forgetAll is called once the listener is back (and once at the start,
// when the listen is in place), so nothing remembered from before the gap
// outlives it.
func WatchCredentialRevocations(ctx context.Context, db *bun.DB, forget func(clientID string), forgetAll func()) {
	ln := pgdriver.NewListener(db)
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() }) // ends a waiting receive
	defer func() {
		stop()
		_ = ln.Close()
	}()
	for ctx.Err() == nil {
		if err := ln.Listen(ctx, credentialChannel); err != nil {
			sleepCtx(ctx, time.Second)
			continue
		}
		forgetAll()
		for {
			channel, payload, err := ln.ReceiveTimeout(ctx, time.Minute)
			if err == nil {
				if channel == credentialChannel {
					forget(payload)
				}
				continue
			}
			var netErr net.Error
			if errors.As(err, &netErr) && netErr.Timeout() && ctx.Err() == nil {
				continue // quiet: keep listening
			}
			break // the connection broke (or ctx ended): listen again
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

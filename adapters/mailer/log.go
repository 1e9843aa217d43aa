// Package mailer delivers embedded-wallet one-time passwords. Log, the
// default, writes them to the service's log (a development stand-in for
// e-mail, like a console mail backend): set up an SMTP adapter for real
// delivery.
package mailer

import (
	"context"
	"log/slog"
	"time"
)

// Log writes each one-time password to the log, at WARN so it stands out,
// saying where it would have gone.
type Log struct{ Logger *slog.Logger }

// SendOTP logs the code.
func (l Log) SendOTP(ctx context.Context, to, code string, expiresAt time.Time) error {
	l.Logger.WarnContext(ctx, "one-time password (no mailer configured: delivered to the log)",
		"to", to, "code", code, "expires_at", expiresAt)
	return nil
}

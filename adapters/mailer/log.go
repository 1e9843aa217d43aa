// Package mailer delivers embedded-wallet one-time passwords. Log, the
// default, writes them to the service's log (a development stand-in for
// e-mail, like a console mail backend): set up an SMTP adapter for real
// delivery.
package mailer

import (
	"context"
	"log/slog"

	"github.com/corridorpay/corridor/core/walletauth"
)

// Log writes each one-time password to the log, at WARN so it stands out,
// saying where it would have gone and under which app name.
type Log struct{ Logger *slog.Logger }

// SendOTP logs the code.
func (l Log) SendOTP(ctx context.Context, o walletauth.OTPMail) error {
	attrs := []any{"to", o.To, "code", o.Code, "expires_at", o.ExpiresAt}
	if o.AppName != "" {
		attrs = append(attrs, "app_name", o.AppName)
	}
	l.Logger.WarnContext(ctx, "one-time password (no mailer configured: delivered to the log)", attrs...)
	return nil
}

package mailer_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/mailer"
	"github.com/corridorpay/corridor/core/walletauth"
)

func TestLogMailer(t *testing.T) {
	var buf bytes.Buffer
	m := mailer.Log{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	require.NoError(t, m.SendOTP(context.Background(), walletauth.OTPMail{To: "ada@example.com", Code: "123456",
		ExpiresAt: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), AppName: "Acme"}))
	assert.Contains(t, buf.String(), "to=ada@example.com")
	assert.Contains(t, buf.String(), "code=123456")
	assert.Contains(t, buf.String(), "app_name=Acme")
}

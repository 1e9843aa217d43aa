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
)

func TestLogMailer(t *testing.T) {
	var buf bytes.Buffer
	m := mailer.Log{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	require.NoError(t, m.SendOTP(context.Background(), "ada@example.com", "123456", time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)))
	assert.Contains(t, buf.String(), "to=ada@example.com")
	assert.Contains(t, buf.String(), "code=123456")
}

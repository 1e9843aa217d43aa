package webhooks_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/webhooks"
	"github.com/corridorpay/corridor/core/events"
	"github.com/corridorpay/corridor/testkit/loadtest"
)

func TestSignAndVerify(t *testing.T) {
	s, err := webhooks.GenerateSigner()
	require.NoError(t, err)
	body := []byte(`{"id":"Webhook:1","type":"TEST","timestamp":"2026-01-01T00:00:00Z"}`)
	sig, err := s.Sign(body)
	require.NoError(t, err)
	require.NoError(t, webhooks.Verify(s.PublicKeyPEM(), body, sig))
	require.Error(t, webhooks.Verify(s.PublicKeyPEM(), append(body, ' '), sig), "one byte more")
	other, _ := webhooks.GenerateSigner()
	require.Error(t, webhooks.Verify(other.PublicKeyPEM(), body, sig), "another key")
	again, err := s.Sign(body)
	require.NoError(t, err)
	require.Equal(t, sig, again, "RFC 6979: the nonce comes from the key and the digest")
	next, err := s.Sign(append(body, ' '))
	require.NoError(t, err)
	require.NotEqual(t, sig, next)
}

func TestNewSignerWantsP256(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	s, err := webhooks.NewSigner(k)
	require.NoError(t, err)
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	assert.Equal(t, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), s.PublicKeyPEM())
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, err = webhooks.NewSigner(p384)
	require.ErrorContains(t, err, "P-256")
}

func TestSenderPostsSignedBodyAndTimesOut(t *testing.T) {
	var got struct {
		body []byte
		sig  string
		ct   string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.body, _ = io.ReadAll(r.Body)
		got.sig, got.ct = r.Header.Get(webhooks.SignatureHeader), r.Header.Get("Content-Type")
		if r.URL.Path == "/slow" {
			time.Sleep(300 * time.Millisecond)
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("thanks"))
	}))
	defer srv.Close()
	s := webhooks.NewSender(100 * time.Millisecond)
	ans, err := s.Send(context.Background(), srv.URL+"/in", []byte(`{"a":1}`), "c2ln")
	require.NoError(t, err)
	assert.Equal(t, http.StatusAccepted, ans.StatusCode)
	assert.Equal(t, "thanks", string(ans.Body))
	assert.Equal(t, `{"a":1}`, string(got.body))
	assert.Equal(t, "c2ln", got.sig)
	assert.Equal(t, "application/json", got.ct)
	_, err = s.Send(context.Background(), srv.URL+"/slow", []byte(`{}`), "x")
	require.Error(t, err, "past the per-attempt timeout")
}

// BenchmarkSignedSend is the least one webhook delivery can cost: sign a
// transaction event's body (1.1 kB) and POST it to a local receiver that
// only reads it and answers 204, events.PerPlatform at once over kept-alive
// connections, with no store, queue, rendering or bookkeeping around it.
// cpu_us/event is this process's CPU (signer, sender and receiver) per
// event: the floor under BenchmarkWebhookDrain's figure, and what sets the
// webhook aims' budget (see README, Performance).
func BenchmarkSignedSend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	signer, err := webhooks.GenerateSigner()
	require.NoError(b, err)
	sender := webhooks.NewSender(10 * time.Second)
	body := []byte(`{"id":"Webhook:019542f5-b3e7-1d02-0000-000000000001","type":"OUTGOING_PAYMENT.COMPLETED",` +
		`"timestamp":"2026-11-27T10:00:00Z","data":{` + strings.Repeat(`"field":"a value of a transaction",`, 28) + `"end":true}}`)
	ctx := context.Background()
	r := loadtest.Run(b.N, events.PerPlatform, func(int) error {
		sig, err := signer.Sign(body)
		if err != nil {
			return err
		}
		ans, err := sender.Send(ctx, srv.URL, body, sig)
		if err == nil && ans.StatusCode != http.StatusNoContent {
			err = fmt.Errorf("answered %d", ans.StatusCode)
		}
		return err
	})
	if r.Errors > 0 {
		b.Fatalf("%d of %d sends failed", r.Errors, r.Ops)
	}
	b.ReportMetric(float64(r.CPU.Microseconds())/float64(r.Ops), "cpu_us/event")
	b.ReportMetric(r.TPS, "events/s")
	b.ReportMetric(float64(len(body)), "body_bytes")
	b.ReportMetric(0, "ns/op")
}

package webhooks_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/webhooks"
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

// Package webhooks sends webhook bodies over HTTP and signs them: the
// transport and the key behind core/events' Sender and Signer.
package webhooks

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/corridorpay/corridor/core/events"
)

// SignatureHeader carries the body's signature.
const SignatureHeader = "X-Service-Signature"

// maxAnswer bounds how much of an endpoint's answer is kept.
const maxAnswer = 64 << 10

// Sender POSTs webhooks with a per-attempt timeout and no redirects (an
// endpoint answers for itself).
type Sender struct {
	client *http.Client
}

// NewSender returns a sender whose attempts end after timeout.
func NewSender(timeout time.Duration) *Sender {
	return &Sender{client: &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		// As many idle connections to one endpoint as a platform may have
		// deliveries in flight: fewer, and a busy platform's sends keep
		// dialling new connections (5 % of the process's CPU in the
		// webhook benchmark at 16).
		Transport: &http.Transport{MaxIdleConnsPerHost: events.PerPlatform, MaxIdleConns: 4 * events.PerPlatform,
			IdleConnTimeout: 90 * time.Second},
	}}
}

// Send POSTs body to url signed with signature: the endpoint's status and
// the start of its body, or an error when it did not answer.
func (s *Sender) Send(ctx context.Context, url string, body []byte, signature string) (events.Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return events.Answer{}, fmt.Errorf("webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "corridor-webhooks/1")
	req.Header.Set(SignatureHeader, signature)
	resp, err := s.client.Do(req)
	if err != nil {
		return events.Answer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	return events.Answer{StatusCode: resp.StatusCode, Body: b}, nil
}

// Signer signs bodies with the deployment's P-256 key: base64 (standard)
// of the ASN.1 DER ECDSA signature over SHA-256 of the exact body.
type Signer struct {
	key *ecdsa.PrivateKey
}

// NewSigner signs with key (a P-256 key).
func NewSigner(key *ecdsa.PrivateKey) (*Signer, error) {
	if key == nil || key.Curve != elliptic.P256() {
		return nil, errors.New("webhook signing key: the curve must be P-256")
	}
	return &Signer{key: key}, nil
}

// GenerateSigner makes a fresh key (a process without a configured one).
func GenerateSigner() (*Signer, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("webhook signing key: %w", err)
	}
	return &Signer{key: k}, nil
}

// Sign is the X-Service-Signature of body: ECDSA P-256 over its SHA-256,
// ASN.1 DER, base64. The nonce is RFC 6979's, derived from the key and the
// digest (a nil random source), which costs a quarter less CPU than a
// hedged one and needs no entropy; a verifier cannot tell the two apart.
func (s *Signer) Sign(body []byte) (string, error) {
	sum := sha256.Sum256(body)
	sig, err := s.key.Sign(nil, sum[:], crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("sign webhook: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// PublicKeyPEM is the public key platforms verify with (PKIX PEM).
func (s *Signer) PublicKeyPEM() string {
	der, err := x509.MarshalPKIXPublicKey(&s.key.PublicKey)
	if err != nil {
		panic("webhooks: marshal a P-256 public key: " + err.Error())
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// Verify checks signature over body with the PEM public key pub (what a
// platform does; the tests use it).
func Verify(pub string, body []byte, signature string) error {
	block, _ := pem.Decode([]byte(pub))
	if block == nil {
		return errors.New("public key: not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("public key: %w", err)
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return errors.New("public key: not ECDSA")
	}
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	sum := sha256.Sum256(body)
	if !ecdsa.VerifyASN1(ek, sum[:], sig) {
		return errors.New("signature does not verify")
	}
	return nil
}

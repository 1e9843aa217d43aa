// Package passkeytest is a virtual WebAuthn authenticator for tests (on
// descope/virtualwebauthn): it registers a passkey against a client-chosen
// challenge and signs assertions over the service's hex challenges, in the
// API's field names.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/descope/virtualwebauthn"
	"github.com/stretchr/testify/require"
)

// Relying party the tests configure the service with.
const (
	RPID   = "wallet.example"
	Origin = "https://wallet.example"
)

// Device is one authenticator holding one passkey.
type Device struct {
	rp   virtualwebauthn.RelyingParty
	auth virtualwebauthn.Authenticator
	cred virtualwebauthn.Credential
}

// New is a device for the tests' relying party, with a fresh EC2 (P-256)
// passkey whose counter starts at 0.
func New() *Device {
	return NewFor(RPID, Origin)
}

// NewFor is a device for another relying party (a wrong one, in tests).
func NewFor(rpID, origin string) *Device {
	d := &Device{rp: virtualwebauthn.RelyingParty{Name: "corridor", ID: rpID, Origin: origin},
		auth: virtualwebauthn.NewAuthenticatorWithOptions(virtualwebauthn.AuthenticatorOptions{UserHandle: []byte("user-1")}),
		cred: virtualwebauthn.NewCredentialWithImportedKey(virtualwebauthn.KeyTypeEC2, fullWidthKey())}
	d.auth.AddCredential(d.cred)
	return d
}

// CredentialID is the passkey's rawId, base64url.
func (d *Device) CredentialID() string { return base64.RawURLEncoding.EncodeToString(d.cred.ID) }

// SetCounter sets the signature counter the next assertion carries.
func (d *Device) SetCounter(n uint32) { d.cred.Counter = n }

// Registration is a create() ceremony in the API's fields.
type Registration struct {
	Challenge         string `json:"challenge"`
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJson"`
	AttestationObject string `json:"attestationObject"`
}

// Register runs a create() ceremony over a fresh random challenge.
func (d *Device) Register(t testing.TB) Registration {
	t.Helper()
	challenge := make([]byte, 32)
	_, _ = rand.Read(challenge)
	raw := virtualwebauthn.CreateAttestationResponse(d.rp, d.auth, d.cred, virtualwebauthn.AttestationOptions{
		Challenge: challenge, RelyingPartyID: d.rp.ID, RelyingPartyName: d.rp.Name, UserID: "user-1", UserName: "ada"})
	var res struct {
		RawID    string `json:"rawId"`
		Response struct {
			ClientDataJSON    string `json:"clientDataJSON"`
			AttestationObject string `json:"attestationObject"`
		} `json:"response"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &res))
	return Registration{Challenge: base64.RawURLEncoding.EncodeToString(challenge), CredentialID: res.RawID,
		ClientDataJSON: res.Response.ClientDataJSON, AttestationObject: res.Response.AttestationObject}
}

// Assertion is a get() ceremony in the API's fields.
type Assertion struct {
	CredentialID      string `json:"credentialId"`
	ClientDataJSON    string `json:"clientDataJson"`
	AuthenticatorData string `json:"authenticatorData"`
	Signature         string `json:"signature"`
	UserHandle        string `json:"userHandle,omitempty"`
}

// Assert signs a get() ceremony over the service's challenge (a hex string
// whose UTF-8 bytes are the WebAuthn challenge), then moves the counter on
// by one as a real authenticator does.
func (d *Device) Assert(t testing.TB, challenge string) Assertion {
	t.Helper()
	raw := virtualwebauthn.CreateAssertionResponse(d.rp, d.auth, d.cred, virtualwebauthn.AssertionOptions{
		Challenge: []byte(challenge), AllowCredentials: []string{d.CredentialID()}, RelyingPartyID: d.rp.ID})
	d.cred.Counter++
	var res struct {
		RawID    string    `json:"rawId"`
		Response Assertion `json:"response"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &res))
	var resp struct {
		Response struct {
			ClientDataJSON string `json:"clientDataJSON"`
		} `json:"response"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &resp))
	a := res.Response
	a.CredentialID, a.ClientDataJSON = res.RawID, resp.Response.ClientDataJSON
	return a
}

// fullWidthKey is a fresh P-256 private key (PKCS #8) whose public
// coordinates are both 32 bytes long. virtualwebauthn writes the COSE x
// and y without their leading zero bytes, which go-webauthn rightly
// refuses, so one key in about 128 would fail a test at random.
func fullWidthKey() []byte {
	for {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic("passkeytest: " + err.Error())
		}
		if len(k.X.Bytes()) != 32 || len(k.Y.Bytes()) != 32 { // the widths the library will write
			continue
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			panic("passkeytest: " + err.Error())
		}
		return der
	}
}

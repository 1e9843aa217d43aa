package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
)

const walletAuthTag = "Embedded Wallet Auth"

// ---- wire models ----

// AuthMethod is an authentication credential of an embedded wallet.
type AuthMethod struct {
	ID           string    `json:"id" doc:"AuthMethod:<uuid>" example:"AuthMethod:019542f5-b3e7-1d02-0000-000000000001"`
	AccountID    string    `json:"accountId" doc:"The embedded wallet (internal account) it authenticates"`
	Type         string    `json:"type" enum:"OAUTH,EMAIL_OTP,SMS_OTP,PASSKEY"`
	CredentialID string    `json:"credentialId,omitempty" doc:"The WebAuthn credential id (PASSKEY only)"`
	Nickname     string    `json:"nickname" doc:"The e-mail address of an EMAIL_OTP credential"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// AuthSession is a session a verified credential issued.
type AuthSession struct {
	ID           string    `json:"id" doc:"Session:<uuid>" example:"Session:019542f5-b3e7-1d02-0000-000000000003"`
	AccountID    string    `json:"accountId"`
	Type         string    `json:"type" enum:"OAUTH,EMAIL_OTP,SMS_OTP,PASSKEY" doc:"The type of the credential that issued it"`
	CredentialID string    `json:"credentialId,omitempty"`
	Nickname     string    `json:"nickname"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	// EncryptedSessionSigningKey is set only when the session is issued
	// for an uncompressed clientPublicKey.
	EncryptedSessionSigningKey string    `json:"encryptedSessionSigningKey,omitempty" doc:"The session's private key, HPKE-sealed to the uncompressed clientPublicKey (base58check); absent for a compressed key, which is itself the session key, and in lists"`
	ExpiresAt                  time.Time `json:"expiresAt"`
}

// AuthMethodList is an account's credentials.
type AuthMethodList struct {
	Data []AuthMethod `json:"data"`
}

// AuthSessionList is an account's active sessions.
type AuthSessionList struct {
	Data []AuthSession `json:"data"`
}

// AuthVerifyRequest verifies a credential and asks for a session: the
// fields of the credential's type.
type AuthVerifyRequest struct {
	Type            string            `json:"type,omitempty" enum:"EMAIL_OTP,OAUTH,PASSKEY,SMS_OTP" doc:"The credential's type (checked when sent)"`
	Otp             string            `json:"otp,omitempty" maxLength:"32" doc:"EMAIL_OTP: the code that was e-mailed (000000 in the sandbox)"`
	OidcToken       string            `json:"oidcToken,omitempty" maxLength:"16384" doc:"OAUTH: a fresh OIDC ID token (iat under 60 s old) of the credential's identity, whose nonce is the hex SHA-256 of clientPublicKey"`
	ClientPublicKey string            `json:"clientPublicKey,omitempty" minLength:"66" maxLength:"130" doc:"EMAIL_OTP and OAUTH: P-256 public key, hex: uncompressed (04…, 130 digits) to receive the session key sealed to it, or compressed (02/03…, 66 digits) to use as the session key (a PASSKEY's comes from its challenge)" example:"02f45f2a22c908b9ce09a7150e514afd24627c401c38a4afc164e1ea783adaaa31"`
	Assertion       *PasskeyAssertion `json:"assertion,omitempty" doc:"PASSKEY: the WebAuthn assertion over the challenge (send the challenge's requestId in Request-Id)"`
}

// PasskeyAssertion is a WebAuthn get() result, each field base64url.
type PasskeyAssertion struct {
	CredentialID      string `json:"credentialId" maxLength:"1024" doc:"rawId"`
	ClientDataJSON    string `json:"clientDataJson" maxLength:"16384" doc:"clientDataJSON"`
	AuthenticatorData string `json:"authenticatorData" maxLength:"16384"`
	Signature         string `json:"signature" maxLength:"4096"`
	UserHandle        string `json:"userHandle,omitempty" maxLength:"1024"`
}

// PasskeyAttestation is a WebAuthn create() result, each field base64url.
type PasskeyAttestation struct {
	CredentialID      string   `json:"credentialId" maxLength:"1024" doc:"rawId"`
	ClientDataJSON    string   `json:"clientDataJson" maxLength:"16384" doc:"clientDataJSON"`
	AttestationObject string   `json:"attestationObject" maxLength:"65536"`
	Transports        []string `json:"transports,omitempty" maxItems:"8" enum:"usb,nfc,ble,internal,hybrid" doc:"getTransports()"`
}

// AuthChallengeRequest is the optional body of a challenge.
type AuthChallengeRequest struct {
	ClientPublicKey string `json:"clientPublicKey,omitempty" maxLength:"130" doc:"PASSKEY: the new session's key, bound into the challenge (as on verify); ignored for EMAIL_OTP"`
}

// AuthChallenge is a challenge's answer: the credential and, for a
// PASSKEY, the WebAuthn challenge to sign.
type AuthChallenge struct {
	AuthMethod
	Challenge string     `json:"challenge,omitempty" doc:"PASSKEY: lower-case hex SHA-256 of the session-creation payload; its UTF-8 bytes are the WebAuthn challenge"`
	RequestID string     `json:"requestId,omitempty" doc:"PASSKEY: echo in Request-Id on verify" example:"Request:7c4a8d09-ca37-4e3e-9e0d-8c2b3e9a1f21"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty" doc:"PASSKEY: the assertion must arrive before this (5 minutes)"`
}

func authMethodOut(m ports.AuthMethod) AuthMethod {
	return AuthMethod{ID: m.ID, AccountID: m.AccountID, Type: m.Type, CredentialID: m.CredentialID, Nickname: m.Nickname,
		CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}
}

func authSessionOut(s ports.WalletSession, m ports.AuthMethod, sealed string) AuthSession {
	return AuthSession{ID: s.ID, AccountID: s.AccountID, Type: m.Type, CredentialID: m.CredentialID, Nickname: m.Nickname,
		CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.CreatedAt.UTC(), EncryptedSessionSigningKey: sealed, ExpiresAt: s.ExpiresAt.UTC()}
}

// ---- operations ----

type authAccountInput struct {
	AccountID string `query:"accountId" required:"true" maxLength:"255" doc:"The embedded wallet (internal account)" example:"InternalAccount:019542f5-b3e7-1d02-0000-000000000002"`
}

type challengeInput struct {
	ID   string `path:"id" maxLength:"255" doc:"AuthMethod:<uuid>"`
	Body *AuthChallengeRequest
}

type verifyInput struct {
	ID        string `path:"id" maxLength:"255" doc:"AuthMethod:<uuid>"`
	RequestID string `header:"Request-Id" maxLength:"255" doc:"PASSKEY: the requestId of the challenge"`
	Body      AuthVerifyRequest
}

// walletAuthAPI handles the embedded-wallet authentication operations.
type walletAuthAPI struct{ d Deps }

func registerWalletAuth(api huma.API, d Deps) {
	h := walletAuthAPI{d}
	registerAll(api,
		func(api huma.API) { huma.Register(api, h.createAuthCredentialOp(), h.createAuthCredential) },
		func(api huma.API) { huma.Register(api, h.listAuthCredentialsOp(), h.listAuthCredentials) },
		func(api huma.API) { huma.Register(api, h.challengeAuthCredentialOp(), h.challengeAuthCredential) },
		func(api huma.API) { huma.Register(api, h.verifyAuthCredentialOp(), h.verifyAuthCredential) },
		func(api huma.API) { huma.Register(api, h.listAuthSessionsOp(), h.listAuthSessions) },
		func(api huma.API) { huma.Register(api, h.revokeAuthCredentialOp(), h.revokeAuthCredential) },
		func(api huma.API) { huma.Register(api, h.revokeAuthSessionOp(), h.revokeAuthSession) },
		func(api huma.API) { huma.Register(api, h.updateInternalAccountOp(), h.updateInternalAccount) },
		func(api huma.API) { huma.Register(api, h.exportInternalAccountOp(), h.exportInternalAccount) },
		func(api huma.API) { huma.Register(api, h.refreshAuthSessionOp(), h.refreshAuthSession) },
	)
}

func (walletAuthAPI) listAuthCredentialsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listAuthCredentials", Method: http.MethodGet, Path: "/auth/credentials",
		Summary:     "List authentication credentials",
		Description: "The credentials of an embedded wallet, oldest first (empty for an account the platform does not have).",
		Tags:        []string{walletAuthTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h walletAuthAPI) listAuthCredentials(ctx context.Context, in *authAccountInput) (*struct{ Body AuthMethodList }, error) {
	ms, err := h.d.WalletAuth.Credentials(ctx, principal(ctx).PlatformID, in.AccountID)
	if err != nil {
		return nil, apiError(err)
	}
	out := AuthMethodList{Data: make([]AuthMethod, len(ms))}
	for i, m := range ms {
		out.Data[i] = authMethodOut(m)
	}
	return &struct{ Body AuthMethodList }{out}, nil
}

func (walletAuthAPI) challengeAuthCredentialOp() huma.Operation {
	return huma.Operation{
		OperationID: "challengeAuthCredential", Method: http.MethodPost, Path: "/auth/credentials/{id}/challenge",
		Summary: "Challenge a credential",
		Description: "EMAIL_OTP: e-mails a new code to the credential's address (codes are single-use, expire after 5 minutes " +
			"and survive 5 wrong tries). The sandbox skips delivery and accepts 000000. PASSKEY: with clientPublicKey, answers " +
			"the WebAuthn challenge (hex SHA-256 of a payload binding that key), a single-use requestId and expiresAt " +
			"(5 minutes). At most 5 challenges per 15 minutes, then 429 with Retry-After. OAUTH credentials have no " +
			"challenge step (400).",
		Tags: []string{walletAuthTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusTooManyRequests},
	}
}

func (h walletAuthAPI) challengeAuthCredential(ctx context.Context, in *challengeInput) (*struct{ Body AuthChallenge }, error) {
	key := ""
	if in.Body != nil {
		key = in.Body.ClientPublicKey
	}
	c, err := h.d.WalletAuth.Challenge(ctx, principal(ctx).PlatformID, in.ID, key)
	if err != nil {
		return nil, apiError(err)
	}
	out := AuthChallenge{AuthMethod: authMethodOut(c.Method)}
	if p := c.Passkey; p != nil {
		at := p.ExpiresAt.UTC()
		out.Challenge, out.RequestID, out.ExpiresAt = p.Challenge, p.RequestID, &at
	}
	return &struct{ Body AuthChallenge }{out}, nil
}

func (walletAuthAPI) verifyAuthCredentialOp() huma.Operation {
	return huma.Operation{
		OperationID: "verifyAuthCredential", Method: http.MethodPost, Path: "/auth/credentials/{id}/verify",
		Summary: "Verify a credential and open a session",
		Description: "EMAIL_OTP: the e-mailed otp and a fresh clientPublicKey. OAUTH: a fresh oidcToken of the credential's " +
			"identity (nonce = hex SHA-256 of clientPublicKey) and clientPublicKey. PASSKEY: the assertion over the " +
			"challenge, with its requestId in Request-Id. With an uncompressed key the new session's private key comes " +
			"back HPKE-sealed to it (encryptedSessionSigningKey); with a compressed key that key is the session key and " +
			"nothing is returned. A failed check is 401 with a reason naming it (a wrong, used or expired code: Invalid " +
			"OTP code); a malformed OIDC token is 400. Sessions last 15 minutes; their key signs the " +
			"Service-Wallet-Signature stamps of the wallet's operations.",
		Tags: []string{walletAuthTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound},
	}
}

func (h walletAuthAPI) verifyAuthCredential(ctx context.Context, in *verifyInput) (*struct{ Body AuthSession }, error) {
	b := in.Body
	req := walletauth.VerifyRequest{Type: b.Type, OTP: b.Otp, ClientPublicKey: b.ClientPublicKey, OIDCToken: b.OidcToken,
		RequestID: in.RequestID}
	if a := b.Assertion; a != nil {
		req.Assertion = &walletauth.PasskeyAssertion{CredentialID: a.CredentialID, ClientDataJSON: a.ClientDataJSON,
			AuthenticatorData: a.AuthenticatorData, Signature: a.Signature, UserHandle: a.UserHandle}
	}
	issued, err := h.d.WalletAuth.VerifyCredential(ctx, principal(ctx).PlatformID, in.ID, req)
	if err != nil {
		return nil, apiError(err)
	}
	return &struct{ Body AuthSession }{authSessionOut(issued.Session, issued.Credential, issued.EncryptedSessionSigningKey)}, nil
}

func (walletAuthAPI) listAuthSessionsOp() huma.Operation {
	return huma.Operation{
		OperationID: "listAuthSessions", Method: http.MethodGet, Path: "/auth/sessions",
		Summary:     "List active sessions",
		Description: "The embedded wallet's active sessions, oldest first, never with their keys.",
		Tags:        []string{walletAuthTag}, Errors: []int{http.StatusBadRequest, http.StatusUnauthorized},
	}
}

func (h walletAuthAPI) listAuthSessions(ctx context.Context, in *authAccountInput) (*struct{ Body AuthSessionList }, error) {
	ss, err := h.d.WalletAuth.Sessions(ctx, principal(ctx).PlatformID, in.AccountID)
	if err != nil {
		return nil, apiError(err)
	}
	out := AuthSessionList{Data: make([]AuthSession, len(ss))}
	for i, s := range ss {
		out.Data[i] = authSessionOut(s.Session, s.Credential, "")
	}
	return &struct{ Body AuthSessionList }{out}, nil
}

// ---- signed-retry operations ----

// SignedRequestChallenge is a signed-retry operation's first answer (202).
type SignedRequestChallenge struct {
	Type          string    `json:"type,omitempty" enum:"OAUTH,EMAIL_OTP,SMS_OTP,PASSKEY" doc:"The credential type involved, where the operation has one"`
	PayloadToSign string    `json:"payloadToSign" doc:"Stamp exactly this string with a session key, byte for byte"`
	RequestID     string    `json:"requestId" doc:"Echo in Request-Id on the retry" example:"Request:7c4a8d09-ca37-4e3e-9e0d-8c2b3e9a1f21"`
	ExpiresAt     time.Time `json:"expiresAt" doc:"The retry must arrive before this (5 minutes)"`
}

// SignedRetryHeaders are the retry's two headers (both absent on the
// first call).
type SignedRetryHeaders struct {
	Signature string `header:"Service-Wallet-Signature" maxLength:"4096" doc:"The stamp over payloadToSign (the retry only)"`
	RequestID string `header:"Request-Id" maxLength:"255" doc:"The requestId of the 202 (the retry only)"`
}

func (r SignedRetryHeaders) retry() walletauth.Retry {
	return walletauth.Retry{RequestID: r.RequestID, Signature: r.Signature}
}

// signedOutput answers 202 with the challenge, or the operation's own
// status and body once the retry is accepted.
type signedOutput struct {
	Status int
	Body   any
}

func challengeOut(c *walletauth.RetryChallenge, typ string) *signedOutput {
	return &signedOutput{Status: http.StatusAccepted, Body: SignedRequestChallenge{Type: typ, PayloadToSign: c.PayloadToSign,
		RequestID: c.RequestID, ExpiresAt: c.ExpiresAt.UTC()}}
}

// signedAnswer answers a signed-retry operation: its error, the challenge
// (202) on the first call, or done's answer once the retry is accepted.
func signedAnswer(c *walletauth.RetryChallenge, typ string, err error, done func() (*signedOutput, error)) (*signedOutput, error) {
	if err != nil {
		return nil, apiError(err)
	}
	if c != nil {
		return challengeOut(c, typ), nil
	}
	return done()
}

// answer is a done of signedAnswer with a fixed status and body.
func answer(status int, body any) func() (*signedOutput, error) {
	return func() (*signedOutput, error) { return &signedOutput{Status: status, Body: body}, nil }
}

// revoked answers a signed-retry revocation: 204 once done.
func revoked(c *walletauth.RetryChallenge, typ string, err error) (*signedOutput, error) {
	return signedAnswer(c, typ, err, answer(http.StatusNoContent, nil))
}

type sessionIDInput struct {
	ID string `path:"id" maxLength:"255" doc:"Session:<uuid>"`
	SignedRetryHeaders
}

// AuthSessionRefreshRequest asks for a new session key.
type AuthSessionRefreshRequest struct {
	ClientPublicKey string `json:"clientPublicKey" minLength:"66" maxLength:"130" doc:"The new session's client key (as on verify)"`
}

type refreshInput struct {
	ID string `path:"id" maxLength:"255" doc:"Session:<uuid>"`
	SignedRetryHeaders
	Body AuthSessionRefreshRequest
}

var signedRetryErrors = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound}

func (walletAuthAPI) revokeAuthSessionOp() huma.Operation {
	return huma.Operation{
		OperationID: "revokeAuthSession", Method: http.MethodDelete, Path: "/auth/sessions/{id}",
		Summary: "Revoke a session",
		Description: "Signed retry: the first call answers 202 with payloadToSign, requestId and the type of the credential " +
			"that issued the session; the retry with Service-Wallet-Signature (a stamp by an active session of the wallet) " +
			"and Request-Id answers 204.",
		Tags: []string{walletAuthTag}, Errors: signedRetryErrors, DefaultStatus: http.StatusNoContent,
	}
}

func (h walletAuthAPI) revokeAuthSession(ctx context.Context, in *sessionIDInput) (*signedOutput, error) {
	return revoked(h.d.WalletAuth.RevokeSession(ctx, principal(ctx).PlatformID, in.ID, in.retry()))
}

func (walletAuthAPI) refreshAuthSessionOp() huma.Operation {
	return huma.Operation{
		OperationID: "refreshAuthSession", Method: http.MethodPost, Path: "/auth/sessions/{id}/refresh",
		Summary: "Refresh a session",
		Description: "Signed retry stamped by the session itself: the first call answers 202; the retry (same body) opens a " +
			"new session of the same credential for clientPublicKey (201, with encryptedSessionSigningKey for an " +
			"uncompressed key). The old session stays active until it expires.",
		Tags: []string{walletAuthTag}, Errors: signedRetryErrors, DefaultStatus: http.StatusCreated,
	}
}

func (h walletAuthAPI) refreshAuthSession(ctx context.Context, in *refreshInput) (*signedOutput, error) {
	body, _ := json.Marshal(in.Body)
	c, issued, err := h.d.WalletAuth.RefreshSession(ctx, principal(ctx).PlatformID, in.ID, in.Body.ClientPublicKey, body, in.retry())
	return signedAnswer(c, "", err, answer(http.StatusCreated,
		authSessionOut(issued.Session, issued.Credential, issued.EncryptedSessionSigningKey)))
}

type credentialRetryInput struct {
	ID string `path:"id" maxLength:"255" doc:"AuthMethod:<uuid>"`
	SignedRetryHeaders
}

func (walletAuthAPI) revokeAuthCredentialOp() huma.Operation {
	return huma.Operation{
		OperationID: "revokeAuthCredential", Method: http.MethodDelete, Path: "/auth/credentials/{id}",
		Summary: "Revoke a credential",
		Description: "Signed retry stamped by an active session of another credential of the same wallet: the first call " +
			"answers 202, the retry 204, and the credential's sessions end at once. The wallet's last credential cannot " +
			"be revoked (400).",
		Tags: []string{walletAuthTag}, Errors: signedRetryErrors, DefaultStatus: http.StatusNoContent,
	}
}

func (h walletAuthAPI) revokeAuthCredential(ctx context.Context, in *credentialRetryInput) (*signedOutput, error) {
	return revoked(h.d.WalletAuth.RevokeCredential(ctx, principal(ctx).PlatformID, in.ID, in.retry()))
}

// InternalAccountUpdateRequest changes an embedded wallet's privacy.
type InternalAccountUpdateRequest struct {
	PrivateEnabled bool `json:"privateEnabled" required:"true" doc:"Wallet privacy on or off"`
}

type updateAccountInput struct {
	ID string `path:"id" maxLength:"255" doc:"InternalAccount:<uuid> (an EMBEDDED_WALLET)"`
	SignedRetryHeaders
	Body InternalAccountUpdateRequest
}

func (walletAuthAPI) updateInternalAccountOp() huma.Operation {
	return huma.Operation{
		OperationID: "updateInternalAccount", Method: http.MethodPatch, Path: "/internal-accounts/{id}",
		Summary: "Update an embedded wallet's privacy",
		Description: "Signed retry stamped by an active session of the wallet: the first call answers 202 with payloadToSign; " +
			"the retry (same body) sets privateEnabled and answers 200 with the account.",
		Tags: []string{walletAuthTag}, Errors: signedRetryErrors,
	}
}

func (h walletAuthAPI) updateInternalAccount(ctx context.Context, in *updateAccountInput) (*signedOutput, error) {
	pid := principal(ctx).PlatformID
	body, _ := json.Marshal(in.Body)
	c, err := h.d.WalletAuth.SetPrivacy(ctx, pid, in.ID, in.Body.PrivateEnabled, body, in.retry())
	return signedAnswer(c, "", err, func() (*signedOutput, error) {
		a, err := h.d.Accounts.Get(ctx, pid, in.ID)
		if err != nil {
			return nil, apiError(err)
		}
		return &signedOutput{Status: http.StatusOK, Body: internalAccountOut(a)}, nil
	})
}

// InternalAccountExportRequest asks for a wallet's secret.
type InternalAccountExportRequest struct {
	ClientPublicKey string `json:"clientPublicKey" minLength:"130" maxLength:"130" doc:"P-256 public key, uncompressed hex (04…): the secret is sealed to it" example:"04f45f2a22c908b9ce09a7150e514afd24627c401c38a4afc164e1ea783adaaa31d4245acfb88c2ebd42b47628d63ecabf345484f0a9f665b63c54c897d5578be2"`
}

// InternalAccountExport is the sealed secret.
type InternalAccountExport struct {
	ID                         string `json:"id" doc:"The wallet"`
	EncryptedWalletCredentials string `json:"encryptedWalletCredentials" doc:"The export bundle: the wallet's mnemonic HPKE-sealed to clientPublicKey, signed with the deployment's export key"`
}

type exportInput struct {
	ID string `path:"id" maxLength:"255" doc:"InternalAccount:<uuid> (an EMBEDDED_WALLET)"`
	SignedRetryHeaders
	Body InternalAccountExportRequest
}

func (walletAuthAPI) exportInternalAccountOp() huma.Operation {
	return huma.Operation{
		OperationID: "exportInternalAccount", Method: http.MethodPost, Path: "/internal-accounts/{id}/export",
		Summary: "Export an embedded wallet's secret",
		Description: "Signed retry stamped by an active session of the wallet: the first call answers 202; the retry (same " +
			"body) answers 200 with encryptedWalletCredentials, the wallet's mnemonic HPKE-sealed to clientPublicKey and " +
			"signed with the deployment's export key (its public key is logged at start-up). 503 when no wallet master " +
			"key is configured.",
		Tags: []string{walletAuthTag}, Errors: signedRetryErrors,
	}
}

func (h walletAuthAPI) exportInternalAccount(ctx context.Context, in *exportInput) (*signedOutput, error) {
	body, _ := json.Marshal(in.Body)
	c, bundle, err := h.d.WalletAuth.Export(ctx, principal(ctx).PlatformID, in.ID, in.Body.ClientPublicKey, body, in.retry())
	return signedAnswer(c, "", err, answer(http.StatusOK, InternalAccountExport{ID: in.ID, EncryptedWalletCredentials: bundle}))
}

// AuthCredentialCreateRequest adds a credential to an embedded wallet:
// the fields of its type.
type AuthCredentialCreateRequest struct {
	Type        string              `json:"type" enum:"EMAIL_OTP,OAUTH,PASSKEY,SMS_OTP" doc:"The credential's type"`
	AccountID   string              `json:"accountId" minLength:"1" maxLength:"255" doc:"The embedded wallet" example:"InternalAccount:019542f5-b3e7-1d02-0000-000000000002"`
	OidcToken   string              `json:"oidcToken,omitempty" maxLength:"16384" doc:"OAUTH: an ID token of the identity to bind (its iss, sub and aud)"`
	Nickname    string              `json:"nickname,omitempty" maxLength:"400" doc:"PASSKEY: the passkey's name, 1-100 characters"`
	Challenge   string              `json:"challenge,omitempty" maxLength:"1024" doc:"PASSKEY: the registration's WebAuthn challenge, base64url"`
	Attestation *PasskeyAttestation `json:"attestation,omitempty" doc:"PASSKEY: the registration ceremony's result"`
}

type createCredentialInput struct {
	SignedRetryHeaders
	Body AuthCredentialCreateRequest
}

func (walletAuthAPI) createAuthCredentialOp() huma.Operation {
	return huma.Operation{
		OperationID: "createAuthCredential", Method: http.MethodPost, Path: "/auth/credentials",
		Summary: "Add a credential to an embedded wallet",
		Description: "201 when the wallet has no credential; otherwise a signed retry (202, then 201, same body) stamped by " +
			"a session of the wallet. EMAIL_OTP is tied to the customer's e-mail, one per wallet (400 " +
			"EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS). OAUTH binds its oidcToken's identity (iss among the supported issuers, " +
			"else 400; one per identity). PASSKEY verifies the registration ceremony against challenge (the same " +
			"credentialId twice: 400 PASSKEY_CREDENTIAL_ALREADY_EXISTS).",
		Tags: []string{walletAuthTag}, Errors: signedRetryErrors, DefaultStatus: http.StatusCreated,
	}
}

func (h walletAuthAPI) createAuthCredential(ctx context.Context, in *createCredentialInput) (*signedOutput, error) {
	b := in.Body
	n := walletauth.NewCredential{Type: b.Type, AccountID: b.AccountID, OIDCToken: b.OidcToken, Nickname: b.Nickname,
		Challenge: b.Challenge}
	if a := b.Attestation; a != nil {
		n.Attestation = &walletauth.PasskeyAttestation{CredentialID: a.CredentialID, ClientDataJSON: a.ClientDataJSON,
			AttestationObject: a.AttestationObject, Transports: a.Transports}
	}
	body, _ := json.Marshal(in.Body)
	c, m, err := h.d.WalletAuth.CreateCredential(ctx, principal(ctx).PlatformID, n, body, in.retry())
	return signedAnswer(c, b.Type, err, answer(http.StatusCreated, authMethodOut(m)))
}

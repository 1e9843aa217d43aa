// Package agentclient is a small Go client of corridor's agent surface,
// for AI assistants and other programs that pay as an agent: redeem a
// device code once for an access token, then call the /agents/me
// operations with it, and wait for the platform's decision on an action
// that needs approval. Answers are returned as the API's JSON (the
// reference's schemas), decoded into the few fields a caller branches on;
// every error answer is an *APIError.
package agentclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// BasePath is the API version segment the client calls under.
const BasePath = "/2025-10-13"

// APIError is an error answer: its HTTP status and the API's error body.
type APIError struct {
	Status  int            `json:"status"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Redeemed is the answer to a redemption: the token is shown this once.
type Redeemed struct {
	AgentID     string          `json:"agentId"`
	AgentName   string          `json:"agentName"`
	AccessToken string          `json:"accessToken"`
	Policy      json.RawMessage `json:"policy"`
}

// Action is what a caller needs of an agent action; Raw is all of it.
type Action struct {
	ID              string          `json:"id"`
	Status          string          `json:"status"`
	Type            string          `json:"type"`
	RejectionReason string          `json:"rejectionReason,omitempty"`
	Transaction     json.RawMessage `json:"transaction,omitempty"`
	Raw             json.RawMessage
}

// Decided reports whether the platform decided and the outcome is known:
// REJECTED, FAILED, or APPROVED with its transaction (an approved action
// is APPROVED while it executes, for the moment before its transaction is
// recorded).
func (a Action) Decided() bool {
	switch a.Status {
	case "", "PENDING_APPROVAL":
		return false
	case "APPROVED":
		return len(a.Transaction) > 0 && string(a.Transaction) != "null"
	}
	return true
}

// Client calls the agent operations of one service with one agent's
// token.
type Client struct {
	// BaseURL is the service's root (scheme and host, e.g.
	// http://127.0.0.1:8080); BasePath is added.
	BaseURL string
	// Token is the agent's access token.
	Token string
	// HTTP is the client used (http.DefaultClient when nil).
	HTTP *http.Client
}

// Redeem connects an agent: it redeems the device code (no credential)
// and returns a Client holding the access token, and the answer.
func Redeem(ctx context.Context, baseURL, code string, hc *http.Client) (*Client, Redeemed, error) {
	c := &Client{BaseURL: baseURL, HTTP: hc}
	var r Redeemed
	raw, err := c.call(ctx, http.MethodPost, "/agents/device-codes/"+url.PathEscape(code)+"/redeem", nil, nil)
	if err != nil {
		return nil, Redeemed{}, err
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, Redeemed{}, fmt.Errorf("agentclient: redeem answer: %w", err)
	}
	c.Token = r.AccessToken
	return c, r, nil
}

// Option sets a header of one call.
type Option func(http.Header)

// IdempotencyKey makes a money-moving call safe to retry.
func IdempotencyKey(key string) Option {
	return func(h http.Header) { h.Set("Idempotency-Key", key) }
}

// WalletSignature is the Service-Wallet-Signature stamp an execution from
// an embedded wallet needs.
func WalletSignature(stamp string) Option {
	return func(h http.Header) { h.Set("Service-Wallet-Signature", stamp) }
}

// Do calls method path (under BasePath, e.g. "/agents/me/transactions?limit=5")
// with body (nil: none; []byte and json.RawMessage are sent as they are,
// anything else as its JSON) and returns the answer's JSON (nil on 204).
func (c *Client) Do(ctx context.Context, method, path string, body any, opts ...Option) (json.RawMessage, error) {
	var b []byte
	switch v := body.(type) {
	case nil:
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("agentclient: encode body: %w", err)
		}
		b = enc
	}
	return c.call(ctx, method, path, b, opts)
}

func (c *Client) call(ctx context.Context, method, path string, body []byte, opts []Option) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+BasePath+path, rd)
	if err != nil {
		return nil, fmt.Errorf("agentclient: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for _, o := range opts {
		o(req.Header)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agentclient: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("agentclient: %s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Code == "" {
			e.Message = strings.TrimSpace(string(raw))
		}
		return nil, e
	}
	if len(raw) == 0 {
		return nil, nil
	}
	return raw, nil
}

// Me is the agent itself: its policy and usage.
func (c *Client) Me(ctx context.Context) (json.RawMessage, error) {
	return c.Do(ctx, http.MethodGet, "/agents/me", nil)
}

// Action reads one of the agent's actions.
func (c *Client) Action(ctx context.Context, id string) (Action, error) {
	return c.action(c.Do(ctx, http.MethodGet, "/agents/me/actions/"+url.PathEscape(id), nil))
}

func (c *Client) action(raw json.RawMessage, err error) (Action, error) {
	if err != nil {
		return Action{}, err
	}
	var a Action
	if err := json.Unmarshal(raw, &a); err != nil {
		return Action{}, fmt.Errorf("agentclient: action answer: %w", err)
	}
	a.Raw = raw
	return a, nil
}

// ExecuteQuote executes one of the agent's quotes: the action, APPROVED
// or PENDING_APPROVAL.
func (c *Client) ExecuteQuote(ctx context.Context, quoteID string, opts ...Option) (Action, error) {
	return c.action(c.Do(ctx, http.MethodPost, "/agents/me/quotes/"+url.PathEscape(quoteID)+"/execute", nil, opts...))
}

// Transfer sends a transfer-out ("out") or transfer-in ("in") body: the
// action.
func (c *Client) Transfer(ctx context.Context, direction string, body any, opts ...Option) (Action, error) {
	if direction != "out" && direction != "in" {
		return Action{}, errors.New(`agentclient: transfer direction is "out" or "in"`)
	}
	return c.action(c.Do(ctx, http.MethodPost, "/agents/me/transfer-"+direction, body, opts...))
}

// Wait polls an action every interval until the platform decided (or
// execution ended it) or ctx ends, and returns it as last read.
func (c *Client) Wait(ctx context.Context, actionID string, interval time.Duration) (Action, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		a, err := c.Action(ctx, actionID)
		if err != nil || a.Decided() {
			return a, err
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-t.C:
		}
	}
}

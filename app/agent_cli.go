package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/corridorpay/corridor/adapters/agentclient"
)

const agentUsage = `usage:
  corridor agent redeem -code CODE -o TOKENFILE   redeem a device code once; the access token goes to TOKENFILE
                                                  (created 0600, never printed); prints the agent and its policy
  corridor agent call [-idempotency-key K] [-wallet-signature STAMP] METHOD PATH [BODY]
                                                  call an /agents/me operation (PATH under the version, e.g.
                                                  /agents/me/transfer-out); prints the JSON answer
  corridor agent wait [-every 2s] [-timeout 10m] ACTION_ID
                                                  poll an action until the platform decides; prints it
Every command takes -url (default $CORRIDOR_URL, else http://127.0.0.1:8080); call and wait take
-token-file (default $CORRIDOR_AGENT_TOKEN_FILE). An error answer is printed and exits non-zero.`

// agentCmd is the agent client for people, scripts and AI assistants
// (adapters/agentclient).
func agentCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, agentUsage)
		return nil
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("agent "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", firstNonEmpty(getenv("CORRIDOR_URL"), "http://127.0.0.1:8080"), "the service's root URL")
	tokenFile := fs.String("token-file", getenv("CORRIDOR_AGENT_TOKEN_FILE"), "file holding the agent's access token")
	code := fs.String("code", "", "the device code")
	out := fs.String("o", "", "file to write the access token to")
	key := fs.String("idempotency-key", "", "Idempotency-Key of a money-moving call")
	stamp := fs.String("wallet-signature", "", "Service-Wallet-Signature of an execution from an embedded wallet")
	every := fs.Duration("every", 2*time.Second, "how often wait polls")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long wait waits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch sub {
	case "redeem":
		return agentRedeem(ctx, *base, *code, *out, stdout)
	case "call", "wait":
		c, err := agentClient(*base, *tokenFile)
		if err != nil {
			return err
		}
		if sub == "wait" {
			return agentWait(ctx, c, fs.Args(), *every, *timeout, stdout)
		}
		var opts []agentclient.Option
		if *key != "" {
			opts = append(opts, agentclient.IdempotencyKey(*key))
		}
		if *stamp != "" {
			opts = append(opts, agentclient.WalletSignature(*stamp))
		}
		return agentCall(ctx, c, fs.Args(), opts, stdout)
	}
	return fmt.Errorf("unknown agent command %q\n%s", sub, agentUsage)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func agentRedeem(ctx context.Context, base, code, out string, stdout io.Writer) error {
	if code == "" || out == "" {
		return errors.New("agent redeem: -code and -o are required")
	}
	// The file first: a token that cannot be kept must not be spent.
	f, err := createSecretFile(out)
	if err != nil {
		return err
	}
	_, r, err := agentclient.Redeem(ctx, base, code, nil)
	if err != nil {
		_ = f.Close()
		_ = os.Remove(out)
		return err
	}
	if _, err := fmt.Fprintln(f, r.AccessToken); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	shown, _ := json.Marshal(map[string]any{"agentId": r.AgentID, "agentName": r.AgentName, "policy": r.Policy, "tokenFile": out})
	fmt.Fprintln(stdout, string(shown))
	return nil
}

func agentClient(base, tokenFile string) (*agentclient.Client, error) {
	if tokenFile == "" {
		return nil, errors.New("agent: -token-file (or CORRIDOR_AGENT_TOKEN_FILE) is required")
	}
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, err
	}
	return &agentclient.Client{BaseURL: base, Token: strings.TrimSpace(string(raw))}, nil
}

func agentCall(ctx context.Context, c *agentclient.Client, args []string, opts []agentclient.Option, stdout io.Writer) error {
	if len(args) < 2 || len(args) > 3 {
		return errors.New("agent call: METHOD PATH [BODY]")
	}
	method, path := strings.ToUpper(args[0]), args[1]
	if path != "/agents/me" && !strings.HasPrefix(path, "/agents/me/") && !strings.HasPrefix(path, "/agents/me?") {
		return errors.New("agent call: the agent's token reaches /agents/me/… only")
	}
	var body any
	if len(args) == 3 {
		body = []byte(args[2])
	}
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodDelete:
	default:
		return fmt.Errorf("agent call: method %s: GET, POST or DELETE", method)
	}
	raw, err := c.Do(ctx, method, path, body, opts...)
	if err != nil {
		return err
	}
	if raw != nil {
		fmt.Fprintln(stdout, string(raw))
	}
	return nil
}

func agentWait(ctx context.Context, c *agentclient.Client, args []string, every, timeout time.Duration, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("agent wait: ACTION_ID")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a, err := c.Wait(ctx, args[0], every)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(a.Raw))
	return nil
}

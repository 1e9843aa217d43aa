package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/pgtest"
)

// buildBinary compiles the corridor binary once per test run.
var buildOnce struct {
	sync.Once
	path string
	err  error
}

func corridorBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "corridor-e2e")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.path = filepath.Join(dir, "corridor")
		out, err := exec.Command("go", "build", "-o", buildOnce.path, ".").CombinedOutput()
		if err != nil {
			buildOnce.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildOnce.err)
	return buildOnce.path
}

// TestMain removes the binary the end-to-end tests built, once every test
// of the package has run.
func TestMain(m *testing.M) {
	code := m.Run()
	// The binaries the end-to-end tests and the ledger report benchmarks
	// built (48 MB each) go with the run.
	for _, bin := range []string{buildOnce.path, benchBinary} {
		if bin != "" {
			_ = os.RemoveAll(filepath.Dir(bin))
		}
	}
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// process is a running corridor binary.
type process struct {
	cmd    *exec.Cmd
	stdout *testkit.SyncBuffer
	base   string
	user   string
	secret string
}

func startCorridor(t *testing.T, env ...string) *process {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(corridorBinary(t))
	cmd.Env = append(os.Environ(), append([]string{"CORRIDOR_ADDR=" + addr, "DATABASE_URL=", "REDIS_URL="}, env...)...)
	out := &testkit.SyncBuffer{}
	cmd.Stdout = out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	p := &process{cmd: cmd, stdout: out, base: "http://" + addr}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("corridor stdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(p.base + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "corridor did not become healthy: %v", err)
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// call sends one request to the binary as the process's credential and
// decodes the JSON answer (also checked against the reference's schema).
func (p *process) call(t *testing.T, method, path string, body any, header ...string) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		b, err = json.Marshal(body)
		require.NoError(t, err)
	}
	r := apiTarget{bases: []string{p.base}, auth: basicAuth(p.user, p.secret)}.do(t, 0, method, path, string(b), header...)
	var out map[string]any
	if len(r.body) > 0 {
		require.NoError(t, json.Unmarshal(r.body, &out), "body: %s", r.body)
	}
	return r.status, out
}

func (p *process) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "corridor should exit 0 on SIGTERM")
	case <-time.After(20 * time.Second):
		t.Fatal("corridor did not stop within 20s of SIGTERM")
	}
}

// customerStory creates a customer, funds its fiat account and reads the
// balance back, through the running binary.
func customerStory(t *testing.T, p *process) {
	t.Helper()
	code, cust := p.call(t, "POST", "/customers", map[string]any{
		"customerType": "INDIVIDUAL", "region": "US", "email": "ada@example.com", "fullName": "Ada Lovelace",
	})
	require.Equal(t, 201, code, "%v", cust)
	custID, _ := cust["id"].(string)
	require.True(t, strings.HasPrefix(custID, "Customer:"), custID)

	code, list := p.call(t, "GET", "/customers/internal-accounts?customerId="+custID+"&type=INTERNAL_FIAT&currency=USD", nil)
	require.Equal(t, 200, code, "%v", list)
	data := list["data"].([]any)
	require.Len(t, data, 1)
	acct := data[0].(map[string]any)
	acctID := acct["id"].(string)

	code, funded := p.call(t, "POST", "/sandbox/internal-accounts/"+acctID+"/fund", map[string]any{"amount": 12550}, "Idempotency-Key", "e2e-fund-1")
	require.Equal(t, 200, code, "%v", funded)
	// A retry with the same key replays and never moves money twice.
	code, _ = p.call(t, "POST", "/sandbox/internal-accounts/"+acctID+"/fund", map[string]any{"amount": 12550}, "Idempotency-Key", "e2e-fund-1")
	require.Equal(t, 200, code)

	code, list = p.call(t, "GET", "/customers/internal-accounts?customerId="+custID+"&type=INTERNAL_FIAT&currency=USD", nil)
	require.Equal(t, 200, code)
	acct = list["data"].([]any)[0].(map[string]any)
	bal := acct["balance"].(map[string]any)
	require.EqualValues(t, 12550, bal["amount"])
	require.Equal(t, "USD", bal["currency"].(map[string]any)["code"])
	require.EqualValues(t, 12550, acct["totalBalance"].(map[string]any)["amount"])
}

var credLine = regexp.MustCompile(`(?m)^\s*token id:\s+(\S+)\s*\n\s*client secret:\s+(\S+)`)

func TestEndToEndInMemory(t *testing.T) {
	p := startCorridor(t)
	// The generated credential is printed on start.
	var m []string
	require.Eventually(t, func() bool { m = credLine.FindStringSubmatch(p.stdout.String()); return m != nil }, 5*time.Second, 20*time.Millisecond)
	p.user, p.secret = m[1], m[2]
	require.Contains(t, p.stdout.String(), p.base+BasePath)

	// Without credentials: 401 with the reference's body and a reason.
	resp, err := http.Get(p.base + BasePath + "/customers")
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	_ = resp.Body.Close()
	require.Equal(t, 401, resp.StatusCode)
	require.Equal(t, "UNAUTHORIZED", body["code"])
	require.NotEmpty(t, body["reason"])

	customerStory(t, p)

	// A path with an empty segment is the API's JSON 404, not a redirect
	// from the listener's own routing; /metrics answers beside the API.
	code, notFound := p.call(t, "GET", "/customers//internal-accounts", nil)
	require.Equal(t, 404, code, "%v", notFound)
	require.Equal(t, "NOT_FOUND", notFound["code"])
	resp, err = http.Get(p.base + "/metrics")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	p.stop(t)
}

func TestEndToEndFixedCredentialOnPostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	// migrate runs alone, and twice is harmless.
	for i := 0; i < 2; i++ {
		cmd := exec.Command(corridorBinary(t), "migrate")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	// platform create provisions a second platform and prints its credential.
	cmd := exec.Command(corridorBinary(t), "platform", "create", "-name", "acme")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := credLine.FindStringSubmatch(string(out))
	require.NotNil(t, m, "%s", out)

	p := startCorridor(t, "DATABASE_URL="+dsn, "CORRIDOR_API_TOKEN_ID=ops-token", "CORRIDOR_API_CLIENT_SECRET=ops-secret-0123456789")
	p.user, p.secret = "ops-token", "ops-secret-0123456789"
	customerStory(t, p)

	// The platform from `platform create` sees none of the other's customers.
	other := *p
	other.user, other.secret = m[1], m[2]
	code, list := other.call(t, "GET", "/customers", nil)
	require.Equal(t, 200, code, "%v", list)
	require.Empty(t, list["data"])
	p.stop(t)

	// State survives a restart on PostgreSQL.
	p2 := startCorridor(t, "DATABASE_URL="+dsn, "CORRIDOR_API_TOKEN_ID=ops-token", "CORRIDOR_API_CLIENT_SECRET=ops-secret-0123456789")
	p2.user, p2.secret = p.user, p.secret
	code, list = p2.call(t, "GET", "/customers", nil)
	require.Equal(t, 200, code)
	require.Len(t, list["data"], 1)
	p2.stop(t)
}

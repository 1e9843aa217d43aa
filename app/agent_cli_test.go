package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's worked example, through corridor agent: redeem a device
// code (the token to a 0600 file, never printed), read itself, quote and
// execute as the agent (PENDING_APPROVAL), wait while the platform
// approves, and see the approved action with its transaction.
func TestAgentCLIApprovalRoundTrip(t *testing.T) {
	s := newAgentStory(t, "memory")
	base := strings.TrimSuffix(s.platform.bases[0], "/")
	agentCLI := func(args ...string) (string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		env := func(k string) string {
			return map[string]string{"CORRIDOR_URL": base}[k]
		}
		err := agentCmd(t.Context(), args, env, &out, &errOut)
		return out.String(), err
	}
	r := s.platform.do(t, 0, "POST", "/agents", fmt.Sprintf(`{"name":"CLI agent","customerId":%q,"policy":{
		"permissions":["VIEW_TRANSACTIONS","CREATE_QUOTES","EXECUTE_QUOTES"],"defaultExecutionMode":"APPROVAL_REQUIRED",
		"spendingLimits":{"currency":"USD","perTransactionLimit":50000}}}`, s.payer.customer))
	require.Equal(t, 201, r.status, "%s", r.body)
	agentID := r.json(t)["agent"].(map[string]any)["id"].(string)
	code := r.json(t)["deviceCode"].(map[string]any)["code"].(string)

	tokenFile := filepath.Join(t.TempDir(), "agent.token")
	out, err := agentCLI("redeem", "-code", code, "-o", tokenFile)
	require.NoError(t, err)
	assert.Contains(t, out, agentID)
	assert.NotContains(t, out, "agt_", "the token is never printed")
	info, err := os.Stat(tokenFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	_, err = agentCLI("redeem", "-code", code, "-o", tokenFile+".2")
	require.ErrorContains(t, err, "400", "a code redeems once")
	_, statErr := os.Stat(tokenFile + ".2")
	assert.True(t, os.IsNotExist(statErr), "no file for a refused redemption")

	out, err = agentCLI("call", "-token-file", tokenFile, "GET", "/agents/me")
	require.NoError(t, err)
	assert.Contains(t, out, agentID)
	_, err = agentCLI("call", "-token-file", tokenFile, "GET", "/customers")
	require.Error(t, err, "the token reaches /agents/me/… only")

	out, err = agentCLI("call", "-token-file", tokenFile, "POST", "/agents/me/quotes", fmt.Sprintf(
		`{"source":{"sourceType":"ACCOUNT","accountId":%q},"destination":{"destinationType":"ACCOUNT","accountId":%q},`+
			`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":2500}`, s.payer.account, s.payer.external))
	require.NoError(t, err)
	var quote struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(out), &quote))
	out, err = agentCLI("call", "-token-file", tokenFile, "-idempotency-key", "cli-1", "POST", "/agents/me/quotes/"+quote.ID+"/execute")
	require.NoError(t, err)
	var action struct{ ID, Status string }
	require.NoError(t, json.Unmarshal([]byte(out), &action))
	assert.Equal(t, "PENDING_APPROVAL", action.Status)

	waited := make(chan string, 1)
	go func() {
		out, err := agentCLI("wait", "-token-file", tokenFile, "-every", "10ms", "-timeout", "20s", action.ID)
		assert.NoError(t, err)
		waited <- out
	}()
	r = s.platform.do(t, 0, "POST", "/agents/"+agentID+"/actions/"+action.ID+"/approve", "")
	require.Equal(t, 200, r.status, "%s", r.body)
	decided := <-waited
	var got struct {
		Status      string
		Transaction map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(decided), &got), decided)
	assert.Equal(t, "APPROVED", got.Status)
	assert.NotEmpty(t, got.Transaction, "approved with its transaction")
}

package agentclient

import (
	"encoding/json"
	"testing"
)

// An action is decided once its outcome is known: an approved one only
// with its transaction (it is APPROVED while it executes).
func TestDecided(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"status":"PENDING_APPROVAL"}`, false},
		{`{"status":"APPROVED"}`, false},
		{`{"status":"APPROVED","transaction":null}`, false},
		{`{"status":"APPROVED","transaction":{"id":"Transaction:1"}}`, true},
		{`{"status":"REJECTED","rejectionReason":"no"}`, true},
		{`{"status":"FAILED"}`, true},
		{`{}`, false},
	} {
		var a Action
		if err := json.Unmarshal([]byte(c.body), &a); err != nil {
			t.Fatal(err)
		}
		if got := a.Decided(); got != c.want {
			t.Errorf("%s: Decided() = %v, want %v", c.body, got, c.want)
		}
	}
}

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A token deleted through one instance fails its next requests on another
// at once (the deleting transaction's NOTIFY reaches the other's
// credential cache), not when that cache would let it go (5 s): two
// corridor binaries on one database.
func TestDeletedTokenFailsOnOtherInstance(t *testing.T) {
	a := twoInstances(t)
	r := a.do(t, 0, "POST", "/tokens", `{"name":"reporting","permissions":["VIEW"]}`)
	require.Equal(t, 201, r.status, "%s", r.body)
	tok := r.json(t)
	view := apiTarget{bases: a.bases, auth: basicAuth(tok["clientId"].(string), tok["clientSecret"].(string))}
	for range 3 { // verified, then remembered, on instance 1
		require.Equal(t, 200, view.do(t, 1, "GET", "/customers", "").status)
	}
	require.Equal(t, 204, a.do(t, 0, "DELETE", "/tokens/"+tok["id"].(string), "").status)
	deleted := time.Now()
	for {
		r := view.do(t, 1, "GET", "/customers", "")
		if r.status == 401 {
			break
		}
		require.Equal(t, 200, r.status, "%s", r.body)
		require.Less(t, time.Since(deleted), time.Second, "instance 1 still accepts the deleted token")
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("refused on the other instance %s after the delete answered", time.Since(deleted))
	require.Equal(t, 401, view.do(t, 0, "GET", "/customers", "").status, "and on the instance that deleted it")
}

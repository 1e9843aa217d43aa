package walletauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/cosmos/go-bip39"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/memory"
	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/core/walletauth"
	"github.com/corridorpay/corridor/ports"
	"github.com/corridorpay/corridor/testkit"
	"github.com/corridorpay/corridor/testkit/coretest"
)

// Export by signed retry: the wallet's mnemonic comes back sealed to the
// client's key and signed with the export key, the same one every time,
// and is stored only sealed under the master key.
func TestExportWallet(t *testing.T) {
	onBothStores(t, func(t *testing.T, b coretest.Backend) {
		ctx := context.Background()
		e := newAuthEnv(t, b, true)
		master := make([]byte, 32)
		_, _ = rand.Read(master)
		exportKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		svc := walletauth.New(e.Store, memory.NewSingleUse(e.Clock), nil, nil, e.Clock, e.IDs,
			walletauth.Options{Sandbox: true, MasterKey: master, ExportKey: exportKey})
		e.svc = svc
		key, _ := e.session(t)
		client := clientKey(t)
		pub := hex.EncodeToString(client.PublicKey().Bytes())
		body := []byte(`{"clientPublicKey":"` + pub + `"}`)

		export := func() []byte {
			t.Helper()
			c, _, err := svc.Export(ctx, e.pid, e.wallet, pub, body, walletauth.Retry{})
			require.NoError(t, err)
			_, bundle, err := svc.Export(ctx, e.pid, e.wallet, pub, body, walletauth.Retry{RequestID: c.RequestID, Signature: stampOf(t, key, c.PayloadToSign)})
			require.NoError(t, err)
			secret, err := walletauth.OpenExport(client, &exportKey.PublicKey, e.pid, bundle)
			require.NoError(t, err)
			return secret
		}
		first := export()
		assert.True(t, bip39.IsMnemonicValid(string(first)), "%s", first)
		assert.Len(t, strings.Fields(string(first)), 24)
		assert.Equal(t, first, export(), "one secret per wallet")
		stored, err := e.Store.Read().WalletSecrets().Get(ctx, e.pid, e.wallet)
		require.NoError(t, err)
		assert.NotContains(t, string(stored.Sealed), string(first[:8]), "stored sealed, never in the clear")

		_, _, err = svc.Export(ctx, e.pid, e.wallet, walletauth.CompressedHex(client.PublicKey()), body, walletauth.Retry{})
		testkit.RequireFault(t, err, fault.KindInvalid, "INVALID_INPUT", "clientPublicKey")
		fiat := e.InternalAccount(ports.InternalAccountFilter{PlatformID: e.pid, Type: "INTERNAL_FIAT"})
		_, _, err = svc.Export(ctx, e.pid, fiat.ID, pub, body, walletauth.Retry{})
		testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
		_, _, err = e.svc.Export(ctx, "Platform:other", e.wallet, pub, body, walletauth.Retry{})
		testkit.RequireFault(t, err, fault.KindNotFound, "NOT_FOUND")
	})
}

// Without a master key export is unavailable, never a stub.
func TestExportNeedsTheMasterKey(t *testing.T) {
	e := newAuthEnv(t, coretest.Memory(), true)
	pub := hex.EncodeToString(clientKey(t).PublicKey().Bytes())
	_, _, err := e.svc.Export(context.Background(), e.pid, e.wallet, pub, nil, walletauth.Retry{})
	assert.ErrorIs(t, err, ports.ErrUnavailable)
}

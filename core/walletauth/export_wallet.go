package walletauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/cosmos/go-bip39"

	"github.com/corridorpay/corridor/core/fault"
	"github.com/corridorpay/corridor/ports"
)

// ActivityExportWallet is the activity of exporting a wallet's secret.
const ActivityExportWallet = "ACTIVITY_TYPE_EXPORT_WALLET"

// Export returns the wallet's secret (its mnemonic, made on the first
// export and kept sealed under the master key) HPKE-sealed to the
// request's uncompressed clientPublicKey and signed with the deployment's
// export key (encryptedWalletCredentials), by signed retry stamped by an
// active session of the wallet; body is the request body the retry must
// repeat.
func (s *Service) Export(ctx context.Context, platformID, accountID, clientPublicKey string, body []byte, r Retry) (*RetryChallenge, string, error) {
	client, err := ParseClientKey(clientPublicKey)
	if err != nil || client.Compressed {
		return nil, "", fault.Invalid("clientPublicKey", "must be an uncompressed P-256 public key: 130 hex digits starting 04")
	}
	if len(s.opts.MasterKey) != 32 || s.opts.ExportKey == nil {
		return nil, "", fmt.Errorf("export %s: %w: no wallet master key or export key is configured", accountID, ports.ErrUnavailable)
	}
	a, err := s.store.Read().InternalAccounts().Get(ctx, platformID, accountID)
	if errors.Is(err, ports.ErrNotFound) || (err == nil && a.Type != "EMBEDDED_WALLET") {
		return nil, "", fault.NotFound("NOT_FOUND", "embedded wallet "+accountID+" not found")
	}
	if err != nil {
		return nil, "", fmt.Errorf("export %s: %w", accountID, err)
	}
	op := Operation{Type: ActivityExportWallet, AccountID: a.ID, Body: body, Parameters: map[string]string{"targetPublicKey": clientPublicKey}}
	if r.First() {
		c, err := s.BeginRetry(ctx, platformID, op)
		return &c, "", err
	}
	if _, err := s.CompleteRetry(ctx, platformID, op, r.RequestID, r.Signature); err != nil {
		return nil, "", err
	}
	mnemonic, err := s.walletSecret(ctx, platformID, a.ID)
	if err != nil {
		return nil, "", err
	}
	bundle, err := SealExport(s.opts.ExportKey, client.Key, platformID, mnemonic)
	return nil, bundle, err
}

// walletSecret reads the wallet's mnemonic, making (and sealing) one on
// first use; two first uses racing keep the one stored first.
func (s *Service) walletSecret(ctx context.Context, platformID, accountID string) ([]byte, error) {
	read := s.store.Read().WalletSecrets()
	sec, err := read.Get(ctx, platformID, accountID)
	if errors.Is(err, ports.ErrNotFound) {
		entropy, err := bip39.NewEntropy(256)
		if err != nil {
			return nil, err
		}
		mnemonic, err := bip39.NewMnemonic(entropy)
		if err != nil {
			return nil, err
		}
		sealed, err := s.sealSecret(accountID, []byte(mnemonic))
		if err != nil {
			return nil, err
		}
		sec = ports.WalletSecret{PlatformID: platformID, AccountID: accountID, Sealed: sealed, CreatedAt: s.now()}
		err = s.store.InTx(ctx, func(tx ports.Tx) error { return tx.WalletSecrets().Create(ctx, sec) })
		if errors.Is(err, ports.ErrConflict) {
			return s.walletSecret(ctx, platformID, accountID)
		}
		if err != nil {
			return nil, fmt.Errorf("store the secret of %s: %w", accountID, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("read the secret of %s: %w", accountID, err)
	}
	return s.openSecret(accountID, sec.Sealed)
}

func (s *Service) aead() (cipher.AEAD, error) {
	block, err := aes.NewCipher(s.opts.MasterKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealSecret is AES-256-GCM under the master key, the nonce first and the
// account id as additional data (a sealed secret opens for its wallet only).
func (s *Service) sealSecret(accountID string, secret []byte) ([]byte, error) {
	g, err := s.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return g.Seal(nonce, nonce, secret, []byte(accountID)), nil
}

func (s *Service) openSecret(accountID string, sealed []byte) ([]byte, error) {
	g, err := s.aead()
	if err != nil {
		return nil, err
	}
	if len(sealed) < g.NonceSize() {
		return nil, fmt.Errorf("the secret of %s is malformed", accountID)
	}
	out, err := g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], []byte(accountID))
	if err != nil {
		return nil, fmt.Errorf("the secret of %s does not open with this master key: %w", accountID, err)
	}
	return out, nil
}

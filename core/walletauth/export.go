package walletauth

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// ExportBundleVersion is the export bundle format's version.
const ExportBundleVersion = "v1.0.0"

type exportBundle struct {
	Version             string `json:"version"`
	Data                string `json:"data"`
	DataSignature       string `json:"dataSignature"`
	EnclaveQuorumPublic string `json:"enclaveQuorumPublic"`
}

type exportData struct {
	EncappedPublic string `json:"encappedPublic"`
	Ciphertext     string `json:"ciphertext"`
	OrganizationID string `json:"organizationId"`
}

// SealExport seals a wallet's secret (its mnemonic) to the client's key and
// signs the result with the deployment's export-signing key: the export
// bundle (a JSON string).
func SealExport(signer *ecdsa.PrivateKey, to *ecdh.PublicKey, organizationID string, secret []byte) (string, error) {
	enc, ct, err := seal(to, secret)
	if err != nil {
		return "", fmt.Errorf("seal export: %w", err)
	}
	data, err := json.Marshal(exportData{EncappedPublic: hex.EncodeToString(enc), Ciphertext: hex.EncodeToString(ct),
		OrganizationID: organizationID})
	if err != nil {
		return "", err
	}
	digest := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, signer, digest[:])
	if err != nil {
		return "", fmt.Errorf("sign export: %w", err)
	}
	pub, err := signer.PublicKey.Bytes()
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(exportBundle{Version: ExportBundleVersion, Data: hex.EncodeToString(data),
		DataSignature: hex.EncodeToString(sig), EnclaveQuorumPublic: hex.EncodeToString(pub)})
	return string(b), err
}

// OpenExport checks an export bundle's signature with signer (the
// deployment's published export key) and its organization, then opens the
// secret with the client's private key (the client side).
func OpenExport(receiver *ecdh.PrivateKey, signer *ecdsa.PublicKey, organizationID, bundle string) ([]byte, error) {
	var b exportBundle
	if err := json.Unmarshal([]byte(bundle), &b); err != nil || b.Version != ExportBundleVersion {
		return nil, errors.New("open export: not an export bundle")
	}
	data, err := hex.DecodeString(b.Data)
	if err != nil {
		return nil, errors.New("open export: data is not hex")
	}
	sig, err := hex.DecodeString(b.DataSignature)
	digest := sha256.Sum256(data)
	if err != nil || !ecdsa.VerifyASN1(signer, digest[:], sig) {
		return nil, errors.New("open export: the bundle is not signed by the export key")
	}
	var d exportData
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, errors.New("open export: malformed data")
	}
	if d.OrganizationID != organizationID {
		return nil, fmt.Errorf("open export: the bundle is for %q, not %q", d.OrganizationID, organizationID)
	}
	enc, err1 := hex.DecodeString(d.EncappedPublic)
	ct, err2 := hex.DecodeString(d.Ciphertext)
	if err1 != nil || err2 != nil {
		return nil, errors.New("open export: malformed data")
	}
	return open(receiver, enc, ct)
}

// ParsePublicKeyHex reads an uncompressed P-256 public key in hex (the
// export key as the README publishes it).
func ParsePublicKeyHex(s string) (*ecdsa.PublicKey, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), b)
}

package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// The ledger checkpoint key is an Ed25519 key in PEM: the private key
// (PKCS #8, "PRIVATE KEY") signs checkpoints and is the operator's, never
// the database's; the public key (PKIX, "PUBLIC KEY") verifies them.

// writeCheckpointKey generates a key and writes its private half to path
// (mode 0600; an existing file is not overwritten).
func writeCheckpointKey(path string) (ed25519.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	f, err := createSecretFile(path)
	if err != nil {
		return nil, err
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		_ = f.Close()
		return nil, err
	}
	return pub, f.Close()
}

func publicKeyPEM(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		panic(err) // an Ed25519 public key always marshals
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// loadCheckpointKey reads the private key.
func loadCheckpointKey(path string) (ed25519.PrivateKey, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: signing a checkpoint needs the private key, the file holds a %q block", path, block.Type)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: the checkpoint key must be Ed25519, it is %T", path, k)
	}
	return priv, nil
}

// loadCheckpointPublicKey reads the public key, from a public or a private
// PEM file.
func loadCheckpointPublicKey(path string) (ed25519.PublicKey, error) {
	block, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	switch block.Type {
	case "PRIVATE KEY":
		priv, err := loadCheckpointKey(path)
		if err != nil {
			return nil, err
		}
		return priv.Public().(ed25519.PublicKey), nil
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%s: the checkpoint key must be Ed25519, it is %T", path, k)
		}
		return pub, nil
	}
	return nil, fmt.Errorf("%s: expected a PUBLIC KEY or PRIVATE KEY PEM block, found %q", path, block.Type)
}

func readPEM(path string) (*pem.Block, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New(path + ": no PEM block")
	}
	return block, nil
}

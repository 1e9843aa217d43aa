package main

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/corridorpay/corridor/core/walletauth"
)

const walletUsage = `usage:
  corridor wallet keygen -o FILE                  a client key pair: the private key (hex) to FILE, the public keys printed
  corridor wallet open-session -key FILE -sealed VALUE -o SESSION
                                                  open an encryptedSessionSigningKey with the client key; the session key to SESSION
  corridor wallet open-export -key FILE -bundle VALUE -org PLATFORM_ID -signer PUBHEX
                                                  open an export bundle (encryptedWalletCredentials) signed by the
                                                  export key PUBHEX (uncompressed hex, logged by the service at start)
  corridor wallet stamp -key SESSION (-payload TEXT | -payload-file FILE)
                                                  the Service-Wallet-Signature stamp of the exact payload
                                                  (a file's one trailing newline is not part of it)
The wallet client for people and scripts: keys stay in the files you name.`

// walletCmd is the embedded-wallet client (core/walletauth's client side).
func walletCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, walletUsage)
		return nil
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("wallet "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "file to write the private key to")
	keyFile := fs.String("key", "", "private key file (hex)")
	sealed := fs.String("sealed", "", "encryptedSessionSigningKey")
	payload := fs.String("payload", "", "payloadToSign, exactly as returned")
	payloadFile := fs.String("payload-file", "", "file holding payloadToSign")
	bundle := fs.String("bundle", "", "encryptedWalletCredentials")
	org := fs.String("org", "", "the platform id the bundle is for")
	signer := fs.String("signer", "", "the service's export public key, uncompressed hex")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch sub {
	case "keygen":
		return walletKeygen(*out, stdout)
	case "open-session":
		return walletOpenSession(*keyFile, *sealed, *out, stdout)
	case "stamp":
		return walletStamp(*keyFile, *payload, *payloadFile, stdout)
	case "open-export":
		return walletOpenExport(*keyFile, *bundle, *org, *signer, stdout)
	}
	return fmt.Errorf("unknown wallet command %q\n%s", sub, walletUsage)
}

func walletKeygen(out string, stdout io.Writer) error {
	if out == "" {
		return errors.New("wallet keygen: -o is required")
	}
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	if err := writeKeyFile(out, k.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "private key written to %s\nclientPublicKey (uncompressed: the session key comes back sealed): %s\n"+
		"clientPublicKey (compressed: this key is the session key):         %s\n",
		out, hex.EncodeToString(k.PublicKey().Bytes()), walletauth.CompressedHex(k.PublicKey()))
	return nil
}

func walletOpenSession(keyFile, sealed, out string, stdout io.Writer) error {
	if keyFile == "" || sealed == "" || out == "" {
		return errors.New("wallet open-session: -key, -sealed and -o are required")
	}
	raw, err := readKeyFile(keyFile)
	if err != nil {
		return err
	}
	client, err := ecdh.P256().NewPrivateKey(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", keyFile, err)
	}
	session, err := walletauth.OpenSessionKey(client, sealed)
	if err != nil {
		return err
	}
	b, err := session.Bytes()
	if err != nil {
		return err
	}
	if err := writeKeyFile(out, b); err != nil {
		return err
	}
	pub, _ := session.PublicKey.ECDH()
	fmt.Fprintf(stdout, "session key written to %s (public key %s)\n", out, walletauth.CompressedHex(pub))
	return nil
}

func walletStamp(keyFile, payload, payloadFile string, stdout io.Writer) error {
	if keyFile == "" || (payload == "") == (payloadFile == "") {
		return errors.New("wallet stamp: -key and one of -payload or -payload-file are required")
	}
	if payloadFile != "" {
		b, err := os.ReadFile(payloadFile)
		if err != nil {
			return err
		}
		// One trailing newline is the file's, not the payload's (the
		// service's payloads are single-line JSON).
		payload = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	}
	raw, err := readKeyFile(keyFile)
	if err != nil {
		return err
	}
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
	if err != nil {
		return fmt.Errorf("%s: %w", keyFile, err)
	}
	stamp, err := walletauth.Sign(key, []byte(payload))
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, stamp)
	return nil
}

func writeKeyFile(path string, key []byte) error {
	f, err := createSecretFile(path)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, hex.EncodeToString(key)); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func readKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("%s: not a 32-byte hex private key", path)
	}
	return raw, nil
}

func walletOpenExport(keyFile, bundle, org, signer string, stdout io.Writer) error {
	if keyFile == "" || bundle == "" || org == "" || signer == "" {
		return errors.New("wallet open-export: -key, -bundle, -org and -signer are required")
	}
	raw, err := readKeyFile(keyFile)
	if err != nil {
		return err
	}
	client, err := ecdh.P256().NewPrivateKey(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", keyFile, err)
	}
	pub, err := walletauth.ParsePublicKeyHex(signer)
	if err != nil {
		return fmt.Errorf("-signer: %w", err)
	}
	secret, err := walletauth.OpenExport(client, pub, org, bundle)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(secret))
	return nil
}

package walletauth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"github.com/corridorpay/corridor/core/walletauth"
)

// BenchmarkStampVerify is the CPU a stamped request costs: parsing the
// Service-Wallet-Signature and checking its ECDSA signature over the
// payload, with the session's decompressed key memoised as in service
// (the sessions come with the parties read, no query of their own).
func BenchmarkStampVerify(b *testing.B) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	payload := []byte(stampPayload)
	stamp, err := walletauth.Sign(key, payload)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := walletauth.ParseStamp(stamp)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Verify(payload); err != nil {
			b.Fatal(err)
		}
	}
}

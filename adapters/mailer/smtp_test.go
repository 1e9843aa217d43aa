package mailer_test

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corridorpay/corridor/adapters/mailer"
	"github.com/corridorpay/corridor/core/walletauth"
)

// fakeRelay accepts one message and returns its DATA.
func fakeRelay(t *testing.T) (string, <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	got := make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r, w := bufio.NewReader(conn), conn
		say := func(s string) { _, _ = w.Write([]byte(s + "\r\n")) }
		say("220 fake")
		var data strings.Builder
		inData := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if inData {
				if line == ".\r\n" {
					inData = false
					got <- data.String()
					say("250 ok")
					continue
				}
				data.WriteString(line)
				continue
			}
			switch cmd := strings.ToUpper(strings.Fields(line + " x")[0]); cmd {
			case "EHLO", "HELO":
				say("250 fake")
			case "DATA":
				inData = true
				say("354 go")
			case "QUIT":
				say("221 bye")
				return
			default:
				say("250 ok")
			}
		}
	}()
	return ln.Addr().String(), got
}

func TestSMTPMailer(t *testing.T) {
	addr, got := fakeRelay(t)
	m := mailer.SMTP{Addr: addr, From: "wallet@corridor.test"}
	require.NoError(t, m.SendOTP(context.Background(), walletauth.OTPMail{To: "ada@example.com", Code: "482913",
		ExpiresAt: time.Date(2026, 11, 25, 12, 5, 0, 0, time.UTC), SenderName: "Notifications"}))
	msg := <-got
	assert.Contains(t, msg, "From: \"Notifications\" <wallet@corridor.test>")
	assert.Contains(t, msg, "To: <ada@example.com>")
	assert.Contains(t, msg, "Subject: Your verification code\r\n")
	assert.Contains(t, msg, "Content-Type: text/plain; charset=utf-8")
	assert.Contains(t, msg, "Your verification code is 482913.")
	assert.Contains(t, msg, "Wed, 25 Nov 2026 12:05:00 UTC")
	assert.NotContains(t, msg, "Reply-To")
	for _, bad := range []walletauth.OTPMail{
		{To: "ada@example.com\r\nBcc: x@y.z", Code: "1"},
		{To: "ada@example.com", Code: "1", SenderName: "Acme\r\nBcc: x@y.z"},
		{To: "ada@example.com", Code: "1", ReplyTo: "a@b.c\nBcc: x@y.z"},
	} {
		assert.Error(t, m.SendOTP(context.Background(), bad), "no header injection")
	}
}

// The platform's branding: its sender address and name, reply-to, the app
// name in the subject and text, and an HTML part with its logo, every
// value escaped.
func TestSMTPMailerBranding(t *testing.T) {
	addr, got := fakeRelay(t)
	m := mailer.SMTP{Addr: addr, From: "wallet@corridor.test"}
	require.NoError(t, m.SendOTP(context.Background(), walletauth.OTPMail{To: "ada@example.com", Code: "K7QX2M",
		ExpiresAt: time.Date(2026, 11, 25, 12, 5, 0, 0, time.UTC), AppName: "Ácme <Wallet>",
		SenderAddress: "noreply@acme.example", SenderName: "Acme Notifications", ReplyTo: "support@acme.example",
		LogoURL: "https://acme.example/logo.png?a=1&b=2"}))
	msg := <-got
	assert.Contains(t, msg, "From: \"Acme Notifications\" <noreply@acme.example>")
	assert.Contains(t, msg, "Reply-To: <support@acme.example>")
	assert.Contains(t, msg, "Subject: =?utf-8?q?Your_=C3=81cme_<Wallet>_verification_code?=")
	assert.Contains(t, msg, "Content-Type: multipart/alternative; boundary=")
	assert.Contains(t, msg, "Your Ácme <Wallet> verification code is K7QX2M.")
	assert.Contains(t, msg, `<img src="https://acme.example/logo.png?a=1&amp;b=2" width="340" height="124" alt="Ácme &lt;Wallet&gt;">`)
	assert.Contains(t, msg, "<strong>K7QX2M</strong>")
}

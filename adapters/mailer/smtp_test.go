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
	require.NoError(t, m.SendOTP(context.Background(), "ada@example.com", "482913", time.Date(2026, 11, 25, 12, 5, 0, 0, time.UTC)))
	msg := <-got
	assert.Contains(t, msg, "To: ada@example.com")
	assert.Contains(t, msg, "Your verification code is 482913.")
	assert.Contains(t, msg, "Wed, 25 Nov 2026 12:05:00 UTC")
	assert.Error(t, m.SendOTP(context.Background(), "ada@example.com\r\nBcc: x@y.z", "1", time.Now()), "no header injection")
}

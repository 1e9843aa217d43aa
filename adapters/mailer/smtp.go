package mailer

import (
	"context"
	"fmt"
	"net"
	"net/smtp"
	"strings"
	"time"
)

// SMTP delivers one-time passwords by e-mail through a relay
// (CORRIDOR_SMTP_ADDR host:port, CORRIDOR_SMTP_FROM, and
// CORRIDOR_SMTP_USERNAME / CORRIDOR_SMTP_PASSWORD for PLAIN auth, which
// net/smtp only sends over TLS or to localhost).
type SMTP struct {
	Addr     string
	From     string
	Username string
	Password string
}

// SendOTP sends the code to to.
func (m SMTP) SendOTP(_ context.Context, to, code string, expiresAt time.Time) error {
	if strings.ContainsAny(to+m.From, "\r\n") {
		return fmt.Errorf("smtp: an address holds a line break")
	}
	var auth smtp.Auth
	if m.Username != "" {
		host, _, err := net.SplitHostPort(m.Addr)
		if err != nil {
			return fmt.Errorf("smtp: %w", err)
		}
		auth = smtp.PlainAuth("", m.Username, m.Password, host)
	}
	if err := smtp.SendMail(m.Addr, auth, m.From, []string{to}, message(m.From, to, code, expiresAt)); err != nil {
		return fmt.Errorf("smtp: send to %s: %w", to, err)
	}
	return nil
}

// message is the e-mail: plain text, the code and when it expires.
func message(from, to, code string, expiresAt time.Time) []byte {
	body := fmt.Sprintf("Your verification code is %s.\r\n\r\nIt expires at %s and works once. "+
		"If you did not ask for it, ignore this e-mail.\r\n", code, expiresAt.UTC().Format(time.RFC1123))
	return []byte("From: " + from + "\r\nTo: " + to + "\r\nSubject: Your verification code\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body)
}

package mailer

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"html"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"
	"unicode"

	"github.com/corridorpay/corridor/core/walletauth"
)

// SMTP delivers one-time passwords by e-mail through a relay
// (CORRIDOR_SMTP_ADDR host:port, CORRIDOR_SMTP_FROM, and
// CORRIDOR_SMTP_USERNAME / CORRIDOR_SMTP_PASSWORD for PLAIN auth, which
// net/smtp only sends over TLS or to localhost). From is the envelope
// sender, where bounces go, and the From header's address unless the
// platform set sendFromEmailAddress (the relay must accept that address).
type SMTP struct {
	Addr     string
	From     string
	Username string
	Password string
}

// SendOTP sends the code to o.To, branded as o says.
func (m SMTP) SendOTP(_ context.Context, o walletauth.OTPMail) error {
	for _, v := range []string{o.To, m.From, o.SenderAddress, o.SenderName, o.ReplyTo, o.AppName} {
		if strings.ContainsFunc(v, unicode.IsControl) {
			return fmt.Errorf("smtp: a header value holds a control character")
		}
	}
	msg, err := message(m.From, o)
	if err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	var auth smtp.Auth
	if m.Username != "" {
		host, _, err := net.SplitHostPort(m.Addr)
		if err != nil {
			return fmt.Errorf("smtp: %w", err)
		}
		auth = smtp.PlainAuth("", m.Username, m.Password, host)
	}
	if err := smtp.SendMail(m.Addr, auth, m.From, []string{o.To}, msg); err != nil {
		return fmt.Errorf("smtp: send to %s: %w", o.To, err)
	}
	return nil
}

// message is the e-mail: the code and when it expires, in plain text, and
// also as HTML under the platform's logo when it set one. The subject and
// the greeting name the app when the platform named one.
func message(envelopeFrom string, o walletauth.OTPMail) ([]byte, error) {
	subject := "Your " + codeName(o)
	from := mail.Address{Name: o.SenderName, Address: envelopeFrom}
	if o.SenderAddress != "" {
		from.Address = o.SenderAddress
	}
	expires := o.ExpiresAt.UTC().Format(time.RFC1123)
	text := fmt.Sprintf("Your %s is %s.\r\n\r\nIt expires at %s and works once. "+
		"If you did not ask for it, ignore this e-mail.\r\n", codeName(o), o.Code, expires)

	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", from.String())
	header("To", (&mail.Address{Address: o.To}).String())
	if o.ReplyTo != "" {
		header("Reply-To", (&mail.Address{Address: o.ReplyTo}).String())
	}
	header("Subject", mime.QEncoding.Encode("utf-8", subject))
	header("MIME-Version", "1.0")
	if o.LogoURL == "" {
		header("Content-Type", "text/plain; charset=utf-8")
		b.WriteString("\r\n" + text)
		return b.Bytes(), nil
	}
	var body bytes.Buffer
	parts := multipart.NewWriter(&body)
	header("Content-Type", "multipart/alternative; boundary="+parts.Boundary())
	b.WriteString("\r\n")
	for _, part := range []struct{ kind, content string }{
		{"text/plain; charset=utf-8", text},
		{"text/html; charset=utf-8", htmlBody(o, expires)},
	} {
		w, err := parts.CreatePart(textproto.MIMEHeader{"Content-Type": {part.kind}})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(part.content)); err != nil {
			return nil, err
		}
	}
	if err := parts.Close(); err != nil {
		return nil, err
	}
	b.Write(body.Bytes())
	return b.Bytes(), nil
}

// htmlBody is the HTML part: the logo (340×124, as the reference sizes
// it), the code, and when it expires; every value escaped.
func htmlBody(o walletauth.OTPMail, expires string) string {
	alt := cmp.Or(o.AppName, "Logo")
	return "<!doctype html><html><body style=\"font-family:sans-serif\">\r\n" +
		"<p><img src=\"" + html.EscapeString(o.LogoURL) + "\" width=\"340\" height=\"124\" alt=\"" + html.EscapeString(alt) + "\"></p>\r\n" +
		"<p>Your " + html.EscapeString(codeName(o)) + " is</p>\r\n" +
		"<p style=\"font-size:28px;letter-spacing:4px\"><strong>" + html.EscapeString(o.Code) + "</strong></p>\r\n" +
		"<p>It expires at " + html.EscapeString(expires) + " and works once. If you did not ask for it, ignore this e-mail.</p>\r\n" +
		"</body></html>\r\n"
}

// codeName is what the e-mail calls the code: "verification code", after
// the app's name when the platform set one.
func codeName(o walletauth.OTPMail) string {
	return strings.TrimSpace(o.AppName + " verification code")
}

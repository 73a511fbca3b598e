package sink

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// SignatureHeader carries the body's HMAC-SHA256 when a secret is set,
// as OrgLoop's coding-agent source (and GitHub) check it.
const SignatureHeader = "X-Hub-Signature-256"

// EventIDHeader carries the OrgLoop event id of a post; a receiver may
// dedupe on it (a retry of the same post repeats it).
const EventIDHeader = "X-Lifeloop-Event-Id"

// DefaultWebhookTimeout bounds one post when Webhook.Timeout is 0.
const DefaultWebhookTimeout = 10 * time.Second

// Webhook posts JSON bodies to one URL. It is safe for concurrent use.
type Webhook struct {
	// URL is an http or https URL.
	URL string
	// Secret signs every body (SignatureHeader) when not empty. It is
	// never logged or returned in an error.
	Secret []byte
	// Timeout bounds one post (default DefaultWebhookTimeout).
	Timeout time.Duration
	// Client is the HTTP client (default: one that does not follow
	// redirects).
	Client *http.Client
	// UserAgent is sent when not empty.
	UserAgent string
}

// CheckWebhookURL says what is wrong with u as a webhook destination.
func CheckWebhookURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("webhook %q: want an http:// or https:// URL, e.g. http://127.0.0.1:4800/webhook/lifeloop", RedactURL(u))
	}
	return nil
}

// RejectedError is a post the receiver answered with a status that a
// retry will not change (4xx other than 408 and 429, or a redirect).
type RejectedError struct{ Status int }

func (e *RejectedError) Error() string {
	if e.Status == 0 {
		return "the request cannot be built from the webhook URL"
	}
	return fmt.Sprintf("receiver answered %d %s", e.Status, http.StatusText(e.Status))
}

// Sign returns the SignatureHeader value of body: "sha256=" and the hex
// HMAC-SHA256 of body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Post sends body once. nil means delivered (a 2xx answer); a
// *RejectedError means the receiver refused it for good; any other
// error (no connection, timeout, 5xx, 408, 429) is worth a retry.
func (w *Webhook) Post(ctx context.Context, body []byte, eventID string) error {
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = DefaultWebhookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return &RejectedError{Status: 0}
	}
	req.Header.Set("Content-Type", "application/json")
	if eventID != "" {
		req.Header.Set(EventIDHeader, eventID)
	}
	if w.UserAgent != "" {
		req.Header.Set("User-Agent", w.UserAgent)
	}
	if len(w.Secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(w.Secret, body))
	}
	client := w.Client
	if client == nil {
		client = noRedirects
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error repeats the URL, which may hold a token.
			return fmt.Errorf("post: %w", ue.Err)
		}
		return fmt.Errorf("post: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return nil
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return fmt.Errorf("receiver answered %d %s", s, http.StatusText(s))
	default:
		return &RejectedError{Status: s}
	}
}

var noRedirects = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// RedactURL is u without user info, query or fragment, which may hold
// secrets: the form logs and errors show.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "<unparsable URL>"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

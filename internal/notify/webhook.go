package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/lifeloop/lifeloop/internal/sink"
)

// Schema names the webhook's document.
const Schema = "lifeloop.attention.v1"

// The webhook's events.
const (
	eventOpened = "episode.opened"
	eventClosed = "episode.closed"
)

// The webhook's headers (docs/notify.md says how to verify the signature).
const (
	HeaderTimestamp = "X-Lifeloop-Timestamp"
	HeaderSignature = "X-Lifeloop-Signature"
	HeaderEvent     = "X-Lifeloop-Event"
	HeaderDelivery  = "X-Lifeloop-Delivery"
)

// retryPause is the pause before a post's one retry.
var retryPause = time.Second

// Document is what the webhook receives.
type Document struct {
	Schema  string     `json:"schema"`
	Event   string     `json:"event"`
	Session string     `json:"session"`
	Harness string     `json:"harness,omitempty"`
	Cwd     string     `json:"cwd,omitempty"`
	Episode EpisodeDoc `json:"episode"`
}

// EpisodeDoc is the episode a Document tells of. End and DurationMs are
// set on episode.closed only.
type EpisodeDoc struct {
	ID         int    `json:"id"`
	Kind       string `json:"kind"`
	Source     string `json:"source,omitempty"`
	Evidence   string `json:"evidence,omitempty"`
	Detail     string `json:"detail,omitempty"`
	Turn       int    `json:"turn"`
	Since      string `json:"since"`
	End        string `json:"end,omitempty"`
	DurationMs *int64 `json:"duration_ms,omitempty"`
}

// DocumentOf is the document of event for e.
func DocumentOf(event string, e Episode) Document {
	ej := EpisodeDoc{ID: e.ID, Kind: e.Kind, Source: e.Source, Evidence: e.Evidence, Detail: e.Detail,
		Turn: e.Turn, Since: formatTime(e.Since)}
	if event == eventClosed {
		ms := e.Duration.Milliseconds()
		ej.End, ej.DurationMs = formatTime(e.End), &ms
	}
	return Document{Schema: Schema, Event: event, Session: e.Session, Harness: e.Harness, Cwd: e.Cwd, Episode: ej}
}

// Sign is the HeaderSignature value of body sent at timestamp (Unix
// seconds, as HeaderTimestamp carries it): "sha256=" and the hex
// HMAC-SHA256, under secret, of timestamp "." body.
func Sign(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature is body's under secret at timestamp:
// what a receiver checks (besides the timestamp's age).
func Verify(secret []byte, timestamp string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, timestamp, body)), []byte(signature))
}

// CheckURL says what is wrong with u as the webhook's URL (nil: an http
// or https URL with a host).
func CheckURL(u string) error { return sink.CheckWebhookURL(u) }

// post sends event's document for e, retrying once after retryPause when
// the failure may pass (no connection, timeout, 408, 429, 5xx).
func (n *Notifier) post(ctx context.Context, event string, e Episode) error {
	body, err := json.Marshal(DocumentOf(event, e))
	if err != nil {
		return err
	}
	delivery := e.Session + "/" + strconv.Itoa(e.ID) + "/" + event
	err = n.postOnce(ctx, event, delivery, body)
	var final *finalError
	if err == nil || errors.As(err, &final) {
		return err
	}
	t := time.NewTimer(retryPause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	if err := n.postOnce(ctx, event, delivery, body); err != nil {
		return fmt.Errorf("%v (after one retry)", err)
	}
	return nil
}

// finalError is an answer a retry would not change.
type finalError struct{ status int }

func (e *finalError) Error() string {
	if e.status == 0 {
		return "the request cannot be built from the webhook URL"
	}
	return fmt.Sprintf("the webhook answered %d %s", e.status, http.StatusText(e.status))
}

// postOnce makes one signed post, bounded by WebhookTimeout.
func (n *Notifier) postOnce(ctx context.Context, event, delivery string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.WebhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return &finalError{}
	}
	ts := strconv.FormatInt(n.cfg.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "lifeloop")
	req.Header.Set(HeaderEvent, event)
	req.Header.Set(HeaderDelivery, delivery)
	req.Header.Set(HeaderTimestamp, ts)
	if n.cfg.WebhookSecret != "" {
		req.Header.Set(HeaderSignature, Sign([]byte(n.cfg.WebhookSecret), ts, body))
	}
	resp, err := n.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL, which may hold a token
		}
		return fmt.Errorf("post to %s: %v", sink.RedactURL(n.cfg.WebhookURL), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return nil
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return fmt.Errorf("the webhook answered %d %s", s, http.StatusText(s))
	default:
		return &finalError{status: s}
	}
}

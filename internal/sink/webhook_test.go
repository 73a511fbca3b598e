package sink

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestSign(t *testing.T) {
	// The widely published HMAC-SHA256 example: key "key", the quick
	// brown fox.
	got := Sign([]byte("key"), []byte("The quick brown fox jumps over the lazy dog"))
	if got != "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8" {
		t.Fatalf("Sign = %s", got)
	}
}

func TestWebhookPostAnswers(t *testing.T) {
	tests := []struct {
		status    int
		delivered bool
		rejected  bool
	}{
		{200, true, false},
		{204, true, false},
		{400, false, true},
		{401, false, true},
		{404, false, true},
		{302, false, true},
		{408, false, false},
		{429, false, false},
		{500, false, false},
		{503, false, false},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			var gotSig, gotID, gotType string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotSig, gotID, gotType = r.Header.Get(SignatureHeader), r.Header.Get(EventIDHeader), r.Header.Get("Content-Type")
				if tt.status == 302 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
			}))
			defer srv.Close()
			w := &Webhook{URL: srv.URL, Secret: []byte("k")}
			err := w.Post(context.Background(), []byte(`{"a":1}`), "evt_0123456789abcdef")
			var re *RejectedError
			if (err == nil) != tt.delivered || errors.As(err, &re) != tt.rejected {
				t.Fatalf("err = %v", err)
			}
			if gotSig != Sign([]byte("k"), []byte(`{"a":1}`)) || gotID != "evt_0123456789abcdef" || gotType != "application/json" {
				t.Fatalf("headers: sig=%q id=%q type=%q", gotSig, gotID, gotType)
			}
		})
	}
}

func TestWebhookUnsignedWithoutSecret(t *testing.T) {
	var had bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, had = r.Header[SignatureHeader]
	}))
	defer srv.Close()
	if err := (&Webhook{URL: srv.URL}).Post(context.Background(), []byte(`{}`), ""); err != nil || had {
		t.Fatalf("err=%v signature header present=%v", err, had)
	}
}

func TestWebhookErrorsHideTheURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	url := strings.Replace(srv.URL, "http://", "http://user:pw@", 1) + "/hook?token=tok"
	srv.Close() // nothing listens any more
	err := (&Webhook{URL: url, Secret: []byte("sekrit")}).Post(context.Background(), []byte(`{}`), "")
	if err == nil {
		t.Fatal("post to a closed server succeeded")
	}
	for _, leak := range []string{"pw", "tok", "sekrit"} {
		if strings.Contains(err.Error(), leak) {
			t.Fatalf("error %q shows %q", err, leak)
		}
	}
	if got := RedactURL(url); strings.Contains(got, "pw") || strings.Contains(got, "tok") {
		t.Fatalf("RedactURL = %s", got)
	}
	if CheckWebhookURL("ftp://x") == nil || CheckWebhookURL("http://") == nil || CheckWebhookURL("https://h/p") != nil {
		t.Fatal("CheckWebhookURL")
	}
}

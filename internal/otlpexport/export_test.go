package otlpexport

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/lifeloop/lifeloop/internal/otelmap"
)

// The error forms are those of the OTLP/HTTP exporters of v1.47
// (client.go of otlptracehttp, otlpmetrichttp, otlploghttp).
func TestRefused(t *testing.T) {
	body := errors.New("body: 404 page not found")
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("failed to send to %s: %s (%w)", "http://h:4318/v1/traces", "404 Not Found", body), true},
		{fmt.Errorf("failed to send logs to %s: %s (%w)", "http://h:4318/v1/logs", "404 Not Found", body), true},
		{fmt.Errorf("failed to send metrics to %s: %s (%w)", "http://h:4318/v1/metrics", "400 Bad Request", body), true},
		{fmt.Errorf("failed to send logs to %s: %s (%w)", "http://h:4318/v1/logs", "401 Unauthorized", body), false},
		{fmt.Errorf("failed to send to %s: %s (%w)", "http://h:4318/v1/traces", "501 Not Implemented", body), true},
		{fmt.Errorf("failed to send to %s: %s (%w)", "http://h:4318/v1/traces", "408 Request Timeout", body), false},
		{fmt.Errorf("failed to send to %s: %s (%w)", "http://h:4318/v1/traces", "500 Internal Server Error", body), false},
		{fmt.Errorf("traces export: %w", &url.Error{Op: "Post", URL: "http://h:4318/v1/traces", Err: errors.New("connection refused")}), false},
		{errors.New("retry-able request failure: body: busy"), false},
	} {
		if got := refused(c.err); got != c.want {
			t.Errorf("refused(%q) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestResourceNames: the resource holds semantic conventions names of
// the pinned version (service.*) or lifeloop.* ones, and the user's
// OTEL_RESOURCE_ATTRIBUTES (passed in Config.Resource) win.
func TestResourceNames(t *testing.T) {
	x, err := New(t.Context(), Config{Endpoint: "http://127.0.0.1:9", SessionID: "ses_x", Version: "1.2.3",
		Resource: []attribute.KeyValue{attribute.String("service.name", "mine")}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = x.Shutdown(t.Context()) }()
	allowed := map[attribute.Key]bool{semconv.ServiceNameKey: true, semconv.ServiceVersionKey: true, semconv.ServiceInstanceIDKey: true}
	got := map[attribute.Key]string{}
	for _, kv := range x.res.Attributes() {
		got[kv.Key] = kv.Value.String()
		if !allowed[kv.Key] && !strings.HasPrefix(string(kv.Key), "lifeloop.") {
			t.Errorf("resource attribute %s is neither semconv %s nor lifeloop.*", kv.Key, otelmap.SemconvVersion)
		}
	}
	if got[semconv.ServiceNameKey] != "mine" || got[semconv.ServiceInstanceIDKey] != "ses_x" || got[semconv.ServiceVersionKey] != "1.2.3" {
		t.Errorf("resource %v", got)
	}
}

package otlpexport

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
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

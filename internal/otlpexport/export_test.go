package otlpexport

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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

// TestRefusedOverGRPC: the gRPC exporters' status errors are read as the
// HTTP answers are: InvalidArgument and Unimplemented are refused for
// good, the rest stays owed.
func TestRefusedOverGRPC(t *testing.T) {
	for _, c := range []struct {
		code codes.Code
		want bool
	}{
		{codes.Unimplemented, true}, {codes.InvalidArgument, true},
		{codes.Unavailable, false}, {codes.Unauthenticated, false}, {codes.PermissionDenied, false},
		{codes.ResourceExhausted, false}, {codes.DeadlineExceeded, false}, {codes.Internal, false},
	} {
		err := fmt.Errorf("traces export: %w", status.Error(c.code, "no"))
		if got := refused(err); got != c.want {
			t.Errorf("refused(%v) = %v, want %v", c.code, got, c.want)
		}
	}
}

// TestProtocols: the standard variables pick each signal's transport,
// the per-signal one first; an explicit protocol wins; http/json is JSON
// for traces only (the SDK has no JSON log or metric exporter); unknown
// values are refused with the variable named.
func TestProtocols(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		cfg     Config
		getenv  func(string) string
		want    map[string]string
		wantErr string
	}{
		{Config{}, env(), map[string]string{"traces": ProtocolHTTP, "logs": ProtocolHTTP, "metrics": ProtocolHTTP}, ""},
		{Config{}, env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), map[string]string{"traces": ProtocolGRPC, "logs": ProtocolGRPC, "metrics": ProtocolGRPC}, ""},
		{Config{}, env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/protobuf"),
			map[string]string{"traces": ProtocolGRPC, "logs": ProtocolHTTP, "metrics": ProtocolGRPC}, ""},
		{Config{Protocol: ProtocolHTTP}, env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), map[string]string{"traces": ProtocolHTTP, "logs": ProtocolHTTP, "metrics": ProtocolHTTP}, ""},
		{Config{}, env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"), map[string]string{"traces": ProtocolJSON, "logs": ProtocolHTTP, "metrics": ProtocolHTTP}, ""},
		{Config{}, env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "h2"), nil, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{Config{Protocol: "udp"}, env(), nil, `"udp"`},
	} {
		got, err := Protocols(c.cfg, c.getenv)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Protocols(%+v) error %v, want one naming %s", c.cfg, err, c.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("Protocols(%+v) = %v, %v; want %v", c.cfg, got, err, c.want)
		}
	}
}

// TestEndpointOf: a per-signal endpoint is used as given, over the base
// with the signal's path.
func TestEndpointOf(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://logs:9428/insert/opentelemetry/v1/logs"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct{ signal, base, path, want string }{
		{"logs", "http://h:4318", "/v1/logs", "http://logs:9428/insert/opentelemetry/v1/logs"},
		{"traces", "http://h:4318", "/v1/traces", "http://h:4318/v1/traces"},
		{"metrics", "http://h:4317", "", "http://h:4317"},
		{"traces", "", "/v1/traces", ""},
	} {
		if got := endpointOf(getenv, c.signal, c.base, c.path); got != c.want {
			t.Errorf("%s over %q: %q, want %q", c.signal, c.base, got, c.want)
		}
	}
}

// TestAnswer: the exporters' errors read as one line, signals with the
// same answer named together, the exporters' own words dropped.
func TestAnswer(t *testing.T) {
	busy := errors.New("retry-able request failure: body: overloaded")
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.Join(fmt.Errorf("traces: %w", fmt.Errorf("traces export: %w", busy)), fmt.Errorf("logs: %w", busy),
			fmt.Errorf("metrics: %w", fmt.Errorf("failed to upload metrics: %w", busy))),
			"traces, logs, metrics: HTTP 429, 502, 503 or 504: busy, try later; body: overloaded"},
		{errors.Join(fmt.Errorf("traces: %w", errors.New("Post \"http://h/v1/traces\": dial tcp: connection refused")), fmt.Errorf("logs: %w", busy)),
			"traces: Post \"http://h/v1/traces\": dial tcp: connection refused; logs: HTTP 429, 502, 503 or 504: busy, try later; body: overloaded"},
		{errors.New("two\nlines"), "two lines"},
	} {
		if got := Answer(c.err); got != c.want {
			t.Errorf("Answer(%q) =\n %q, want\n %q", c.err, got, c.want)
		}
	}
}

package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/otelid"
)

func TestHarnessOTelEnv(t *testing.T) {
	environ := []string{
		"PATH=/bin",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318",
		"OTEL_EXPORTER_OTLP_HEADERS=x-api-key=secret",
		"OTEL_RESOURCE_ATTRIBUTES=team=infra",
		"TRACEPARENT=00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01",
		"OTEL_SERVICE_NAME=mine",
	}
	const id = "ses_01M8E34X430D5EHK9EAAZT3PZJ"
	for _, keep := range []bool{false, true} {
		base, forSession := harnessOTelEnv(environ, keep)
		env := slices.Concat(base, forSession(id, 2))
		get := func(k string) []string {
			var vs []string
			for _, kv := range env {
				if key, v, _ := strings.Cut(kv, "="); key == k {
					vs = append(vs, v)
				}
			}
			return vs
		}
		if got := get("TRACEPARENT"); !slices.Equal(got, []string{otelid.Traceparent(id, otelid.ProcessSpan(2))}) {
			t.Errorf("keep=%v: TRACEPARENT %v, want the second process's incarnation span's alone", keep, got)
		}
		if got := get("OTEL_RESOURCE_ATTRIBUTES"); !slices.Equal(got, []string{"team=infra,lifeloop.session.id=" + id}) {
			t.Errorf("keep=%v: OTEL_RESOURCE_ATTRIBUTES %v", keep, got)
		}
		ep := get("OTEL_EXPORTER_OTLP_ENDPOINT")
		if keep != (len(ep) == 1) || keep != (len(get("OTEL_EXPORTER_OTLP_HEADERS")) == 1) {
			t.Errorf("keep=%v: OTEL_EXPORTER_OTLP_* %v", keep, env)
		}
		if len(get("PATH")) != 1 || len(get("OTEL_SERVICE_NAME")) != 1 {
			t.Errorf("keep=%v: other variables changed: %v", keep, env)
		}
	}
	if tp := otelid.Traceparent(id, otelid.SessionSpan); len(tp) != 55 || !strings.HasPrefix(tp, "00-") || !strings.HasSuffix(tp, "-01") {
		t.Errorf("traceparent %q", tp)
	}
}

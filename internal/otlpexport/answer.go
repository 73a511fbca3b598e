package otlpexport

import (
	"errors"
	"strings"
)

// busyMarker is how the OTLP/HTTP exporters word a response they may
// retry; the status code itself is not kept: it is one of those of
// busyStatuses (client.go of otlptracehttp, otlploghttp, otlpmetrichttp).
const (
	busyMarker   = "retry-able request failure"
	busyStatuses = "HTTP 429, 502, 503 or 504: busy, try later"
)

// signalPrefixes are what the exporters put before the answer itself.
var signalPrefixes = []string{"traces export: ", "failed to upload metrics: ", "failed to upload logs: "}

// Answer says on one line what the backend answered, from an error of
// Export: the answer of each signal that failed, the signals with the
// same answer named together ("traces, logs, metrics: HTTP 429, 502,
// 503 or 504: busy, try later; body: overloaded").
func Answer(err error) string {
	if err == nil {
		return ""
	}
	var parts []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
	} else {
		parts = []error{err}
	}
	var order []string
	signals := map[string][]string{}
	for _, p := range parts {
		signal, text := "", oneLine(p.Error())
		if inner := errors.Unwrap(p); inner != nil {
			if s, _, ok := strings.Cut(text, ": "); ok && (s == "traces" || s == "logs" || s == "metrics") {
				signal, text = s, oneLine(inner.Error())
			}
		}
		text = plainAnswer(text)
		if _, seen := signals[text]; !seen {
			order = append(order, text)
		}
		if signal != "" {
			signals[text] = append(signals[text], signal)
		} else if signals[text] == nil {
			signals[text] = []string{}
		}
	}
	out := make([]string, len(order))
	for i, text := range order {
		if s := signals[text]; len(s) > 0 {
			text = strings.Join(s, ", ") + ": " + text
		}
		out[i] = text
	}
	return strings.Join(out, "; ")
}

// plainAnswer drops the exporter's own words before the answer and says
// what a retryable response was.
func plainAnswer(text string) string {
	if i := strings.Index(text, busyMarker); i >= 0 {
		rest := strings.TrimPrefix(text[i+len(busyMarker):], ":")
		return strings.TrimSpace(busyStatuses + ";" + rest)
	}
	for _, p := range signalPrefixes {
		text = strings.TrimPrefix(text, p)
	}
	return text
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

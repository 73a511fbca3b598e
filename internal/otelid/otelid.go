// Package otelid derives the OpenTelemetry trace and span ids of a
// lifeloop session from its session id, so an export replayed from the
// ledger reproduces the same trace, and the ids the harness is handed at
// launch (TRACEPARENT) are the ids the exporter uses later. It has no
// dependencies beyond the standard library: lifeloop itself links it,
// the exporter program links the rest.
package otelid

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// SessionSpan is the span key of a session's root span.
const SessionSpan = "session"

// TraceID is the trace id of session id: the first 16 bytes of
// SHA-256("lifeloop.trace/" + id).
func TraceID(id string) [16]byte {
	sum := sha256.Sum256([]byte("lifeloop.trace/" + id))
	var t [16]byte
	copy(t[:], sum[:16])
	return t
}

// SpanID is the id of the span named key in session id's trace: the
// first 8 bytes of SHA-256("lifeloop.span/" + id + "/" + key), never all
// zero.
func SpanID(id, key string) [8]byte {
	sum := sha256.Sum256([]byte("lifeloop.span/" + id + "/" + key))
	var s [8]byte
	copy(s[:], sum[:8])
	if s == [8]byte{} {
		s[7] = 1
	}
	return s
}

// ProcessSpan is the span key of the incarnation ("invoke_agent") span
// that harness process n of a session opens (1 at the launch, one more
// at each relaunch). A switch to a new harness session inside a process
// opens a further incarnation, ProcessSwitchSpan.
func ProcessSpan(n int) string { return "incarnation/" + strconv.Itoa(n) }

// ProcessSwitchSpan is the span key of the k-th incarnation (k >= 2) of
// harness process n: the k-1-th switch to a new harness session inside it.
func ProcessSwitchSpan(n, k int) string { return ProcessSpan(n) + "/" + strconv.Itoa(k) }

// Traceparent is the W3C traceparent of the span key in session id's
// trace, sampled.
func Traceparent(id, key string) string {
	t, s := TraceID(id), SpanID(id, key)
	return "00-" + hex.EncodeToString(t[:]) + "-" + hex.EncodeToString(s[:]) + "-01"
}

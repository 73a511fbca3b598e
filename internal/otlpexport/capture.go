package otlpexport

import (
	"context"
	"sync"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// spanCapture is the tracer provider's span processor: it keeps each
// ended span for Export to send itself (and know the answer), instead of
// a batcher sending it in the background.
type spanCapture struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (c *spanCapture) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (c *spanCapture) OnEnd(s sdktrace.ReadOnlySpan) {
	c.mu.Lock()
	c.spans = append(c.spans, s)
	c.mu.Unlock()
}

func (c *spanCapture) Shutdown(context.Context) error   { return nil }
func (c *spanCapture) ForceFlush(context.Context) error { return nil }

func (c *spanCapture) take() []sdktrace.ReadOnlySpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.spans
	c.spans = nil
	return s
}

// logCapture is the logger provider's processor, for the same reason.
type logCapture struct {
	mu   sync.Mutex
	recs []sdklog.Record
}

func (c *logCapture) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

func (c *logCapture) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.mu.Lock()
	c.recs = append(c.recs, r.Clone())
	c.mu.Unlock()
	return nil
}

func (c *logCapture) Shutdown(context.Context) error   { return nil }
func (c *logCapture) ForceFlush(context.Context) error { return nil }

func (c *logCapture) take() []sdklog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.recs
	c.recs = nil
	return r
}

// ids are the trace and span id a span is started with.
type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

type idsKey struct{}

// fixedIDs is the tracer provider's id generator: it hands out the ids
// otelmap derived, carried in the context the span is started with.
type fixedIDs struct{}

func (fixedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.trace, v.span
}

func (fixedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.span
}

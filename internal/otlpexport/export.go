// Package otlpexport sends what package otelmap makes of a ledger to an
// OpenTelemetry backend over OTLP — HTTP (protobuf) or gRPC, per signal
// as the standard OTEL_EXPORTER_OTLP_*PROTOCOL variables say — through
// the official Go SDK: spans are built by the SDK's tracer (with the ids otelmap
// derived), log records by its logger, metric data points as the SDK's
// metricdata, and each signal goes out through its OTLP exporter.
//
// The exporters' own retries are off: delivery, retries and the cursor
// are package outbox's (see Outbox), so a backend that is down costs
// nothing but a later send.
package otlpexport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lifeloop/lifeloop/internal/otelmap"
)

// ScopeName is the instrumentation scope of everything exported.
const ScopeName = "github.com/lifeloop/lifeloop"

// DefaultTimeout bounds one export request when Config.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// The OTLP transports (the values of OTEL_EXPORTER_OTLP_PROTOCOL). The
// Go SDK sends JSON over HTTP for traces only: its log and metric HTTP
// exporters speak protobuf, so http/json means protobuf for those two.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolJSON = "http/json"
	ProtocolGRPC = "grpc"
)

// Config says where to send, how and as whom.
type Config struct {
	// Endpoint is the backend's base URL: for OTLP/HTTP
	// (http://127.0.0.1:4318) each signal goes to its path under it
	// (/v1/traces, /v1/logs, /v1/metrics); for gRPC
	// (http://127.0.0.1:4317, http:// meaning without TLS) the path is
	// ignored. Empty: the exporters read the standard
	// OTEL_EXPORTER_OTLP_* variables (default localhost, port 4318 or
	// 4317). Headers, TLS, compression and timeouts come from those
	// variables in both cases.
	Endpoint string
	// Protocol is ProtocolHTTP, ProtocolJSON or ProtocolGRPC for every
	// signal. Empty:
	// each signal's OTEL_EXPORTER_OTLP_{TRACES,LOGS,METRICS}_PROTOCOL,
	// else OTEL_EXPORTER_OTLP_PROTOCOL, else ProtocolHTTP.
	Protocol string
	// Getenv reads the standard variables (default os.Getenv).
	Getenv func(string) string
	// SessionID is the lifeloop session exported (service.instance.id).
	SessionID string
	// Adapter is the session's harness adapter id.
	Adapter string
	// Version is lifeloop's version (service.version).
	Version string
	// Timeout bounds one export request (default DefaultTimeout).
	Timeout time.Duration
	// Resource adds attributes to the resource (for example from
	// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, which win).
	Resource []attribute.KeyValue
}

// Exporter sends otelmap output for one session.
type Exporter struct {
	cfg     Config
	res     *resource.Resource
	traces  *otlptrace.Exporter
	logs    sdklog.Exporter
	metrics sdkmetric.Exporter
	tp      *sdktrace.TracerProvider
	spans   *spanCapture
	lp      *sdklog.LoggerProvider
	recs    *logCapture

	mu       sync.Mutex
	refusals map[string]Refusal
}

// New builds the exporters; it does not connect.
func New(ctx context.Context, cfg Config) (*Exporter, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	attrs := []attribute.KeyValue{
		semconv.ServiceNameKey.String("lifeloop"),
		semconv.ServiceInstanceIDKey.String(cfg.SessionID),
		otelmap.AttrSessionID.String(cfg.SessionID),
	}
	if cfg.Version != "" {
		attrs = append(attrs, semconv.ServiceVersionKey.String(cfg.Version))
	}
	if cfg.Adapter != "" {
		attrs = append(attrs, otelmap.AttrAdapter.String(cfg.Adapter))
	}
	attrs = append(attrs, cfg.Resource...)
	res := resource.NewSchemaless(attrs...)

	te, le, me, err := exporters(ctx, cfg)
	if err != nil {
		return nil, err
	}
	x := &Exporter{cfg: cfg, res: res, traces: te, logs: le, metrics: me, spans: &spanCapture{}, recs: &logCapture{}}
	x.tp = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(fixedIDs{}),
		sdktrace.WithSpanProcessor(x.spans),
	)
	x.lp = sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(x.recs))
	return x, nil
}

// Protocols returns the transport of each signal (traces, logs,
// metrics) as cfg and getenv (the standard variables) say, or an error
// naming the variable whose value is not one this program speaks.
func Protocols(cfg Config, getenv func(string) string) (map[string]string, error) {
	out := map[string]string{}
	for _, signal := range []string{"traces", "logs", "metrics"} {
		p, from := cfg.Protocol, "the protocol"
		if p == "" {
			from = "OTEL_EXPORTER_OTLP_" + strings.ToUpper(signal) + "_PROTOCOL"
			if p = getenv(from); p == "" {
				from = "OTEL_EXPORTER_OTLP_PROTOCOL"
				p = getenv(from)
			}
		}
		switch p {
		case "", ProtocolHTTP:
			out[signal] = ProtocolHTTP
		case ProtocolJSON:
			out[signal] = ProtocolHTTP
			if signal == "traces" {
				out[signal] = ProtocolJSON
			}
		case ProtocolGRPC:
			out[signal] = ProtocolGRPC
		default:
			return nil, fmt.Errorf("%s=%q: use http/protobuf, http/json or grpc", from, p)
		}
	}
	return out, nil
}

// exporters builds each signal's OTLP exporter for its protocol, with the
// SDK's own retries off.
func exporters(ctx context.Context, cfg Config) (*otlptrace.Exporter, sdklog.Exporter, sdkmetric.Exporter, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	protos, err := Protocols(cfg, getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	base := strings.TrimRight(cfg.Endpoint, "/")
	var (
		te *otlptrace.Exporter
		le sdklog.Exporter
		me sdkmetric.Exporter
	)
	if protos["traces"] == ProtocolGRPC {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}), otlptracegrpc.WithTimeout(cfg.Timeout)}
		if u := endpointOf(getenv, "traces", base, ""); u != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(u))
		}
		te, err = otlptracegrpc.New(ctx, opts...)
	} else {
		enc := otlptracehttp.EncodingProtobuf
		if protos["traces"] == ProtocolJSON {
			enc = otlptracehttp.EncodingJSON
		}
		opts := []otlptracehttp.Option{otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}), otlptracehttp.WithTimeout(cfg.Timeout), otlptracehttp.WithEncoding(enc)}
		if u := endpointOf(getenv, "traces", base, "/v1/traces"); u != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(u))
		}
		te, err = otlptracehttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("otlp traces exporter: %w", err)
	}
	if protos["logs"] == ProtocolGRPC {
		opts := []otlploggrpc.Option{otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}), otlploggrpc.WithTimeout(cfg.Timeout)}
		if u := endpointOf(getenv, "logs", base, ""); u != "" {
			opts = append(opts, otlploggrpc.WithEndpointURL(u))
		}
		le, err = otlploggrpc.New(ctx, opts...)
	} else {
		opts := []otlploghttp.Option{otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}), otlploghttp.WithTimeout(cfg.Timeout)}
		if u := endpointOf(getenv, "logs", base, "/v1/logs"); u != "" {
			opts = append(opts, otlploghttp.WithEndpointURL(u))
		}
		le, err = otlploghttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("otlp logs exporter: %w", err)
	}
	if protos["metrics"] == ProtocolGRPC {
		opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}), otlpmetricgrpc.WithTimeout(cfg.Timeout)}
		if u := endpointOf(getenv, "metrics", base, ""); u != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(u))
		}
		me, err = otlpmetricgrpc.New(ctx, opts...)
	} else {
		opts := []otlpmetrichttp.Option{otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}), otlpmetrichttp.WithTimeout(cfg.Timeout)}
		if u := endpointOf(getenv, "metrics", base, "/v1/metrics"); u != "" {
			opts = append(opts, otlpmetrichttp.WithEndpointURL(u))
		}
		me, err = otlpmetrichttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("otlp metrics exporter: %w", err)
	}
	return te, le, me, nil
}

// endpointOf is the URL signal is sent to: the standard per-signal
// OTEL_EXPORTER_OTLP_{TRACES,LOGS,METRICS}_ENDPOINT as given (a whole
// URL, nothing appended), else base with the signal's path (none over
// gRPC); "" when neither is set (the exporter's own default).
func endpointOf(getenv func(string) string, signal, base, path string) string {
	if v := getenv("OTEL_EXPORTER_OTLP_" + strings.ToUpper(signal) + "_ENDPOINT"); v != "" {
		return v
	}
	if base == "" {
		return ""
	}
	return base + path
}

// Shutdown closes the exporters (bounded by ctx). It is idempotent.
func (x *Exporter) Shutdown(ctx context.Context) error {
	return errors.Join(x.tp.Shutdown(ctx), x.lp.Shutdown(ctx),
		x.traces.Shutdown(ctx), x.logs.Shutdown(ctx), x.metrics.Shutdown(ctx))
}

// Batch is some otelmap output on its way: Export sends each signal not
// sent yet, and remembers which went, so sending a batch again after a
// partial failure does not send a signal twice.
type Batch struct {
	Out                   otelmap.Output
	spans, logs, measures bool
}

// Export sends what b still owes: spans, then logs, then metrics. A
// signal the backend refuses for good (see refused: e.g. 404 from a
// backend that takes no logs) is dropped and counted in Refused; any
// other failure is returned, to be sent again.
func (x *Exporter) Export(ctx context.Context, b *Batch) error {
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	var errs []error
	send := func(signal string, done *bool, n int, export func() error) {
		if *done {
			return
		}
		err := export()
		switch {
		case err == nil:
			*done = true
		case refused(err):
			*done = true
			x.refuse(signal, n, err)
		default:
			errs = append(errs, fmt.Errorf("%s: %w", signal, err))
		}
	}
	send("traces", &b.spans, len(b.Out.Spans), func() error { return x.exportSpans(ctx, b.Out.Spans) })
	send("logs", &b.logs, len(b.Out.Logs), func() error { return x.exportLogs(ctx, b.Out.Logs) })
	send("metrics", &b.measures, len(b.Out.Metrics), func() error { return x.exportMetrics(ctx, b.Out.Metrics) })
	return errors.Join(errs...)
}

// Refusal is what the backend refused of one signal.
type Refusal struct {
	Items int    `json:"items"`
	Error string `json:"error"`
}

// Refused returns, per signal (traces, logs, metrics), what the backend
// refused for good so far.
func (x *Exporter) Refused() map[string]Refusal {
	x.mu.Lock()
	defer x.mu.Unlock()
	return maps.Clone(x.refusals)
}

func (x *Exporter) refuse(signal string, n int, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.refusals == nil {
		x.refusals = map[string]Refusal{}
	}
	r := x.refusals[signal]
	r.Items += n
	r.Error = err.Error()
	x.refusals[signal] = r
}

// statusRE finds the HTTP status in the OTLP/HTTP exporters' error for a
// response they do not retry ("failed to send to URL: 404 Not Found",
// "failed to send logs to …", "failed to send metrics to …").
var statusRE = regexp.MustCompile(`failed to send (?:logs |metrics )?to \S+: (\d{3}) `)

// refused reports whether err says the backend will never take this
// data. Over HTTP: 400 (refused as malformed), 404, 405, 415 or 501 (no
// such signal here, e.g. logs sent to a backend that stores only
// traces). Over gRPC the same answers: InvalidArgument and Unimplemented.
// Every other failure is sent again later — transport errors, 408, 429
// and 5xx (Unavailable, ResourceExhausted, DeadlineExceeded…), and also
// 401 and 403 (Unauthenticated, PermissionDenied), so that data sent
// with a wrong key stays owed until the key is fixed, instead of being
// dropped.
func refused(err error) bool {
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return st.Code() == codes.InvalidArgument || st.Code() == codes.Unimplemented
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return false
	}
	m := statusRE.FindStringSubmatch(err.Error())
	if m == nil {
		return false
	}
	switch m[1] {
	case "400", "404", "405", "415", "501":
		return true
	}
	return false
}

func (x *Exporter) traceID() trace.TraceID { return otelmap.New(x.cfg.SessionID).TraceID() }

func (x *Exporter) exportSpans(ctx context.Context, spans []otelmap.Span) error {
	if len(spans) == 0 {
		return nil
	}
	tid := x.traceID()
	tracer := x.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(x.cfg.Version), trace.WithSchemaURL(otelmap.SchemaURL))
	for _, s := range spans {
		sctx := context.WithValue(context.Background(), idsKey{}, ids{trace: tid, span: s.ID})
		if s.Parent.IsValid() {
			sctx = trace.ContextWithSpanContext(sctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: s.Parent, TraceFlags: trace.FlagsSampled}))
		}
		opts := []trace.SpanStartOption{trace.WithTimestamp(s.Start), trace.WithAttributes(s.Attrs...), trace.WithSpanKind(trace.SpanKindInternal)}
		for _, l := range s.Links {
			opts = append(opts, trace.WithLinks(trace.Link{
				SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: l.SpanID, TraceFlags: trace.FlagsSampled}),
				Attributes:  l.Attrs,
			}))
		}
		_, span := tracer.Start(sctx, s.Name, opts...)
		for _, ev := range s.Events {
			span.AddEvent(ev.Name, trace.WithTimestamp(ev.Time), trace.WithAttributes(ev.Attrs...))
		}
		if s.Status != 0 {
			span.SetStatus(s.Status, s.StatusDesc)
		}
		span.End(trace.WithTimestamp(s.End))
	}
	return x.traces.ExportSpans(ctx, x.spans.take())
}

func (x *Exporter) exportLogs(ctx context.Context, logs []otelmap.Log) error {
	if len(logs) == 0 {
		return nil
	}
	tid := x.traceID()
	logger := x.lp.Logger(ScopeName, otellog.WithInstrumentationVersion(x.cfg.Version), otellog.WithSchemaURL(otelmap.SchemaURL))
	for _, l := range logs {
		lctx := context.Background()
		if l.SpanID.IsValid() {
			lctx = trace.ContextWithSpanContext(lctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: l.SpanID, TraceFlags: trace.FlagsSampled}))
		}
		var r otellog.Record
		r.SetTimestamp(l.Time)
		r.SetObservedTimestamp(l.Time)
		r.SetEventName(l.EventName)
		r.SetSeverity(otellog.Severity(l.Severity))
		r.SetSeverityText(severityText(l.Severity))
		r.SetBody(jsonValue(l.Body))
		r.AddAttributes(l.Attrs...)
		logger.Emit(lctx, r)
	}
	return x.logs.Export(ctx, x.recs.take())
}

func severityText(s otelmap.Severity) string {
	switch s {
	case otelmap.SeverityError:
		return "ERROR"
	case otelmap.SeverityWarn:
		return "WARN"
	}
	return "INFO"
}

func (x *Exporter) exportMetrics(ctx context.Context, points []otelmap.Metric) error {
	if len(points) == 0 {
		return nil
	}
	var ms []metricdata.Metrics
	index := map[string]int{}
	for _, p := range points {
		i, ok := index[p.Name]
		if !ok {
			i = len(ms)
			index[p.Name] = i
			ms = append(ms, metricdata.Metrics{Name: p.Name, Unit: p.Unit, Description: p.Description})
		}
		set := attribute.NewSet(p.Attrs...)
		switch p.Kind {
		case otelmap.Gauge:
			g, _ := ms[i].Data.(metricdata.Gauge[float64])
			g.DataPoints = append(g.DataPoints, metricdata.DataPoint[float64]{Attributes: set, Time: p.Time, Value: p.Value})
			ms[i].Data = g
		case otelmap.Counter, otelmap.UpDownCounter:
			s, _ := ms[i].Data.(metricdata.Sum[int64])
			s.Temporality, s.IsMonotonic = metricdata.CumulativeTemporality, p.Kind == otelmap.Counter
			s.DataPoints = append(s.DataPoints, metricdata.DataPoint[int64]{Attributes: set, StartTime: p.Start, Time: p.Time, Value: p.Int})
			ms[i].Data = s
		case otelmap.FloatCounter:
			s, _ := ms[i].Data.(metricdata.Sum[float64])
			s.Temporality, s.IsMonotonic = metricdata.CumulativeTemporality, true
			s.DataPoints = append(s.DataPoints, metricdata.DataPoint[float64]{Attributes: set, StartTime: p.Start, Time: p.Time, Value: p.Value})
			ms[i].Data = s
		case otelmap.Histogram:
			h, _ := ms[i].Data.(metricdata.Histogram[float64])
			h.Temporality = metricdata.CumulativeTemporality
			h.DataPoints = append(h.DataPoints, metricdata.HistogramDataPoint[float64]{
				Attributes: set, StartTime: p.Start, Time: p.Time,
				Count: p.Hist.Count, Bounds: p.Hist.Bounds, BucketCounts: p.Hist.Counts, Sum: p.Hist.Sum,
				Min: metricdata.NewExtrema(p.Hist.Min), Max: metricdata.NewExtrema(p.Hist.Max),
			})
			ms[i].Data = h
		}
	}
	rm := &metricdata.ResourceMetrics{
		Resource: x.res,
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope:   instrumentation.Scope{Name: ScopeName, Version: x.cfg.Version, SchemaURL: otelmap.SchemaURL},
			Metrics: ms,
		}},
	}
	return x.metrics.Export(ctx, rm)
}

// jsonValue turns a JSON document into a log value (maps, slices,
// strings, numbers, booleans); what does not parse stays a string.
func jsonValue(raw []byte) attribute.Value {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return attribute.StringValue(string(raw))
	}
	return toValue(v)
}

func toValue(v any) attribute.Value {
	switch t := v.(type) {
	case map[string]any:
		kvs := make([]attribute.KeyValue, 0, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(k), Value: toValue(t[k])})
		}
		return attribute.MapValue(kvs...)
	case []any:
		vs := make([]attribute.Value, len(t))
		for i, e := range t {
			vs[i] = toValue(e)
		}
		return attribute.SliceValue(vs...)
	case string:
		return attribute.StringValue(t)
	case bool:
		return attribute.BoolValue(t)
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return attribute.Int64Value(i)
		}
		f, _ := t.Float64()
		return attribute.Float64Value(f)
	}
	return attribute.Value{}
}

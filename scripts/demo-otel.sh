#!/usr/bin/env bash
# Demo of the OpenTelemetry export: start Jaeger v2 on 127.0.0.1 (traces
# in memory) and, when `make victorialogs` built it, VictoriaLogs (the
# receipt logs), run scripts/demo.sh (the bundled mock model and a real
# `claude -p` turn) under `lifeloop run --otlp`, print the Jaeger UI's
# URL of the session's trace, and leave both running until Ctrl-C.
# Needs `make harnesses` and `make jaeger` (make demo-otel runs them when
# missing). The Jaeger `make jaeger` builds from the Go module proxy has
# no UI assets (its page is a placeholder; the query API answers): set
# JAEGER_BIN to a Jaeger v2 release binary for the UI. JAEGER_OTLP_PORT
# (4318), JAEGER_UI_PORT (16686), JAEGER_GRPC_PORT (16685) and
# VICTORIALOGS_PORT (9428) move them.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jaeger="${JAEGER_BIN:-$root/.cache/jaeger}"
[[ -x "$jaeger" ]] || { echo "demo-otel: $jaeger not found; run \`make jaeger\` first" >&2; exit 1; }
otlp_port="${JAEGER_OTLP_PORT:-4318}"
ui_port="${JAEGER_UI_PORT:-16686}"
grpc_port="${JAEGER_GRPC_PORT:-16685}"
vlogs="$root/.cache/victoria-logs"
vlogs_port="${VICTORIALOGS_PORT:-9428}"

work="$(mktemp -d "${TMPDIR:-/tmp}/lifeloop-demo-otel.XXXXXX")"
chmod 700 "$work"
jaeger_pid=""
vlogs_pid=""
cleanup() {
  for pid in $jaeger_pid $vlogs_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/jaeger.yaml" <<YAML
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:$ui_port
    grpc:
      endpoint: 127.0.0.1:$grpc_port
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:0
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$otlp_port
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
YAML

echo "== starting Jaeger (OTLP/HTTP 127.0.0.1:$otlp_port, UI 127.0.0.1:$ui_port; its log: $work/jaeger.log)"
"$jaeger" --config "$work/jaeger.yaml" >"$work/jaeger.log" 2>&1 &
jaeger_pid=$!
for _ in $(seq 1 300); do
  curl -fsS -o /dev/null "http://127.0.0.1:$ui_port/" 2>/dev/null && break
  kill -0 "$jaeger_pid" 2>/dev/null || { echo "demo-otel: Jaeger exited:" >&2; cat "$work/jaeger.log" >&2; exit 1; }
  sleep 0.1
done

logs_url=""
if [[ -x "$vlogs" ]]; then
  echo "== starting VictoriaLogs (127.0.0.1:$vlogs_port; data in $work)"
  "$vlogs" -httpListenAddr "127.0.0.1:$vlogs_port" -storageDataPath "$work/vlogs" -loggerLevel WARN >"$work/vlogs.log" 2>&1 &
  vlogs_pid=$!
  for _ in $(seq 1 300); do
    curl -fsS -o /dev/null "http://127.0.0.1:$vlogs_port/health" 2>/dev/null && break
    kill -0 "$vlogs_pid" 2>/dev/null || { echo "demo-otel: VictoriaLogs exited:" >&2; cat "$work/vlogs.log" >&2; exit 1; }
    sleep 0.1
  done
  logs_url="http://127.0.0.1:$vlogs_port/insert/opentelemetry/v1/logs"
else
  echo "== no $vlogs (\`make victorialogs\`): the receipt logs go to Jaeger, which keeps none"
fi

set +e
LIFELOOP_DEMO_OTLP="http://127.0.0.1:$otlp_port" LIFELOOP_DEMO_OTLP_LOGS="$logs_url" LIFELOOP_DEMO_SESSION_OUT="$work/session" \
  "$root/scripts/demo.sh" "$@"
code=$?
set -e

id="$(cat "$work/session" 2>/dev/null || true)"
if [[ -z "$id" ]]; then
  echo "demo-otel: no session was recorded (exit $code)" >&2
  exit 1
fi
# The trace id is derived from the session id (docs/otel.md).
trace="$(printf 'lifeloop.trace/%s' "$id" | sha256sum | cut -c1-32)"
echo "== session $id is trace $trace:"
echo "   UI:  http://127.0.0.1:$ui_port/trace/$trace"
echo "   API: curl -s http://127.0.0.1:$ui_port/api/traces/$trace"
if grep -q 'ui assets not embedded' "$work/jaeger.log"; then
  echo "   (this Jaeger has no UI assets, its page is a placeholder: set JAEGER_BIN to a Jaeger v2 release binary for the UI)"
fi
spans="$(curl -fsS "http://127.0.0.1:$ui_port/api/traces/$trace" | grep -o '"operationName":"[^"]*"' | sed 's/"operationName"://; s/"//g' | sort | uniq -c || true)"
echo "== its spans, from Jaeger's query API:"
echo "$spans"
if [[ -n "$logs_url" ]]; then
  query="http://127.0.0.1:$vlogs_port/select/logsql/query"
  echo "== its receipts as log records in VictoriaLogs (LogsQL: curl -s $query -d 'query=\"service.instance.id\":=$id'):"
  curl -fsS "$query" -d "query=\"service.instance.id\":=$id | fields _time, event_name, lifeloop.sequence, span_id | sort by (lifeloop.sequence)" || true
fi
echo "== Jaeger${vlogs_pid:+ and VictoriaLogs} keep running; Ctrl-C stops them"
wait "$jaeger_pid" || true

#!/usr/bin/env bash
# Demo: start the loopback mock model server, run one real `claude -p` turn
# against it under `lifeloop run` in a throw-away HOME, then print the
# session's receipts (`lifeloop receipts --latest`). Needs `make harnesses`
# (make demo runs it when the harnesses are missing).
#
# With LIFELOOP_DEMO_OTLP=URL the run exports to that OTLP/HTTP endpoint
# (`lifeloop run --otlp URL`, scripts/demo-otel.sh), its logs to
# LIFELOOP_DEMO_OTLP_LOGS when set (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT);
# with LIFELOOP_DEMO_SESSION_OUT=FILE the session id is written to FILE.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
claude="${LIFELOOP_CLAUDE_BIN:-$root/harnesses/node_modules/.bin/claude}"
if [[ ! -x "$claude" ]]; then
  echo "demo: $claude not found; run \`make harnesses\` first" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/lifeloop-demo.XXXXXX")"
chmod 700 "$work"
mock_pid=""
cleanup() {
  if [[ -n "$mock_pid" ]]; then
    kill -INT "$mock_pid" 2>/dev/null || true
    wait "$mock_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building lifeloop and the mock model server"
(cd "$root" && make -s build BIN="$work/lifeloop" && go build -o "$work/mockmodel" ./internal/testharness/cmd/mockmodel)

echo "== starting it"
"$work/mockmodel" -v -reply "Hello from lifeloop's mock model." >"$work/mock.url" 2>"$work/mock.log" &
mock_pid=$!
for _ in $(seq 1 100); do
  [[ -s "$work/mock.url" ]] && break
  sleep 0.1
done
url="$(head -n1 "$work/mock.url")"
[[ -n "$url" ]] || { echo "demo: the mock did not start:" >&2; cat "$work/mock.log" >&2; exit 1; }
echo "   listening on $url"

mkdir -p "$work/home" "$work/project"
prompt="${1:-Say hello}"
otlp=()
[[ -z "${LIFELOOP_DEMO_OTLP:-}" ]] || otlp=(--otlp "$LIFELOOP_DEMO_OTLP")
otlp_env=()
[[ -z "${LIFELOOP_DEMO_OTLP_LOGS:-}" ]] || otlp_env=(OTEL_EXPORTER_OTLP_LOGS_ENDPOINT="$LIFELOOP_DEMO_OTLP_LOGS")
echo "== lifeloop run ${otlp[*]} -- claude -p \"$prompt\" (HOME=$work/home, cwd=$work/project)"
set +e
(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" TERM="${TERM:-xterm}" \
  LIFELOOP_STATE_DIR="$work/state" \
  ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-lifeloop-demo-key \
  DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "${otlp_env[@]}" \
  timeout 180 "$work/lifeloop" run "${otlp[@]}" -- "$claude" -p "$prompt" </dev/null)
code=$?
set -e
echo "== lifeloop run exited with code $code (the harness's own)"

echo "== requests the mock served"
sed -e 's/^time=[^ ]* level=INFO msg="mockmodel request" /   /' "$work/mock.log"

echo "== lifeloop sessions"
"$work/lifeloop" sessions --state-dir "$work/state"

echo "== lifeloop receipts --latest (the session's lifecycle receipts, NDJSON)"
"$work/lifeloop" receipts --latest --state-dir "$work/state"
if [[ -n "${LIFELOOP_DEMO_SESSION_OUT:-}" ]]; then
  ls "$work/state/sessions" >"$LIFELOOP_DEMO_SESSION_OUT"
fi
exit "$code"

#!/usr/bin/env bash
# Demo: start the loopback mock model server, run one real `claude -p` turn
# against it in a throw-away HOME, print what happened, stop the mock.
# Needs `make harnesses`. A later change puts `lifeloop run` in front of the
# harness.
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

echo "== building the mock model server"
(cd "$root" && go build -o "$work/mockmodel" ./internal/testharness/cmd/mockmodel)

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
echo "== claude -p \"$prompt\" (HOME=$work/home, cwd=$work/project)"
set +e
(cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" TERM="${TERM:-xterm}" \
  ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-lifeloop-demo-key \
  DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
  timeout 180 "$claude" -p "$prompt" </dev/null)
code=$?
set -e
echo "== claude exited with code $code"

echo "== requests the mock served"
sed -e 's/^time=[^ ]* level=INFO msg="mockmodel request" /   /' "$work/mock.log"

echo "== transcript written by claude"
find "$work/home/.claude/projects" -name '*.jsonl' -printf '   %P (%s bytes)\n' 2>/dev/null || true
for f in "$work"/home/.claude/projects/*/*.jsonl; do
  [[ -f "$f" ]] || continue
  # One line per record: its type and, for assistant lines, the usage.
  python3 - "$f" <<'PY' 2>/dev/null || grep -o '"type":"[a-z-]*"' "$f" | sort | uniq -c
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    extra = ""
    if r.get("type") == "assistant":
        extra = " usage=" + json.dumps(r["message"].get("usage", {}).get("input_tokens")) + " in / " + json.dumps(r["message"].get("usage", {}).get("output_tokens")) + " out"
    print("   " + r.get("type", "?") + extra)
PY
done
exit "$code"

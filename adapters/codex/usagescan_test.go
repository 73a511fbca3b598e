package codex

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"testing"
)

// The one-pass reading of token counts and providers finds what
// encoding/json finds, line by line, in the real rollouts, a generated
// one and lines shaped to send it to encoding/json: the same calls, the
// same errors, the same state to resume from.
func TestUsageOnePassAgreesWithDecoding(t *testing.T) {
	lines := rolloutLines(t)

	n := 0
	tc := func(info string) []byte {
		n++
		return fmt.Appendf(nil, `{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{%s,"model_context_window":258400,"last_token_usage":{"total_tokens":%d}},"rate_limits":{"limit_id":"codex","primary":null}}}`, info, 1000+n)
	}
	// usage's fields, with one changed, so each line is a new call
	usage := func(extra string) string {
		return `{"input_tokens":120,"cached_input_tokens":30,"cache_write_input_tokens":7,"output_tokens":50,"reasoning_output_tokens":9` + extra + `}`
	}
	meta := func(payload string) []byte {
		return []byte(`{"timestamp":"2026-11-21T22:02:49.422Z","type":"session_meta","payload":{"id":"s-` + fmt.Sprint(len(lines)) + `","cwd":"/home/dev/p",` + payload + `}}`)
	}
	shaped := [][]byte{
		meta(`"model_provider":"openai"`),
		[]byte(`{"timestamp":"2026-11-21T22:02:49.812Z","type":"turn_context","payload":{"turn_id":"t1","model":"gpt-5.1-codex"}}`),
		tc(`"total_token_usage":` + usage("")),
		tc(`"total_token_usage":` + usage(`,"nested":{"input_tokens":99,"a":["}",{"b":"\"{"}]}`)),
		tc(`"total_token_usage":` + usage(`,"Input_tokens":5`)),
		tc(`"total_token_usage":` + usage(`,"input_tokens":6`)),
		tc(`"total_token_usage":` + usage(`,"input_tok\u0065ns":7`)),
		tc(`"total_token_usage":` + usage(`,"ïnput_tokens":8`)),
		tc(`"total_token_usage":` + usage(`,"note":"été \u00e9 \\ \" `+"\xff"+`"`)),
		tc(`"total_token_usage":{"input_tokens":1.5,"output_tokens":2}`),
		tc(`"total_token_usage":{"input_tokens":-3,"output_tokens":2}`),
		tc(`"total_token_usage":{"input_tokens":"3","output_tokens":2}`),
		tc(`"total_token_usage":{"input_tokens":null,"output_tokens":2}`),
		tc(`"total_token_usage":{"input_tokens":12345678901234567890,"output_tokens":2}`),
		tc(`"total_token_usage":{"input_tokens":1e3,"output_tokens":2}`),
		tc(`"total_token_usage":null`),
		tc(`"total_token_usage":[1,2]`),
		tc(`"total_token_usage":` + usage("") + `,"total_token_usage":` + usage(`,"output_tokens":1`)),
		tc(`"Total_token_usage":` + usage("")),
		tc(`"total_token_usage":` + usage("") + `,"last_token_usage":null`),
		tc(`"total_token_usage":` + usage("") + `,"deep":{"last_token_usage":{"input_tokens":1}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":` + usage(`,"total_tokens":77`) + `}}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":` + usage(`,"total_tokens":78`) + `}},"payload":{"type":"token_count","info":{"last_token_usage":{"total_tokens":79}}}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","Payload":{"type":"token_count","info":{"last_token_usage":{"total_tokens":80}}}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":` + usage(`,"total_tokens":81`) + `}}} `),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":` + usage(`,"total_tokens":82`) + `}}} x`),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":` + usage(`,"total_tokens":83`)),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"total_tokens":84,"input_tokens":1`),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"total_tokens":85,"input_tokens":1}},"rate_limits":{"a":"` + "\x01" + `"}}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"total_tokens":86,"input_tokens":1}},"rate_limits":{"a":"\q"}}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":null}}`),
		meta(`"model_provider":"open\u0061i-\u00e9"`),
		tc(`"total_token_usage":` + usage("")),
		meta(`"model_provider":7`),
		tc(`"total_token_usage":` + usage("")),
		meta(`"model_provider":"a","model_provider":"b"`),
		tc(`"total_token_usage":` + usage("")),
		meta(`"Model_provider":"c"`),
		tc(`"total_token_usage":` + usage("")),
		meta(`"model_provider":null`),
		tc(`"total_token_usage":` + usage("")),
		meta(`"model_provider":"x","rest":{"model_provider":"y"}`),
		tc(`"total_token_usage":` + usage("")),
		[]byte(`{"timestamp":"2026-11-21T22:02:49.422Z","type":"session_meta","payload":{"id":"s-trunc","model_provider":"z"`),
		tc(`"total_token_usage":` + usage("")),
	}
	lines = append(lines, shaped...)
	// and every line cut short, which no reading may count
	for _, l := range shaped {
		lines = append(lines, l[:len(l)*2/3])
	}

	fast := Harness{}.NewUsageParser("/h/.codex/sessions/rollout-x.jsonl", nil).(*usageParser)
	whole := Harness{}.NewUsageParser("/h/.codex/sessions/rollout-x.jsonl", nil).(*usageParser)
	whole.decodeOnly = true
	calls, bad := 0, 0
	providers := map[string]bool{}
	for i, line := range lines {
		got, gotErr := fast.Parse(nil, line)
		want, wantErr := whole.Parse(nil, line)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("line %d: one pass error %v, encoding/json's %v\n%s", i, gotErr, wantErr, line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d: one pass %+v, encoding/json %+v\n%s", i, got, want, line)
		}
		if g, w := fast.State(), whole.State(); !bytes.Equal(g, w) {
			t.Fatalf("line %d: one pass state %s, encoding/json's %s\n%s", i, g, w, line)
		}
		calls += len(got)
		if gotErr != nil {
			bad++
		}
		for _, e := range got {
			providers[e.Provider] = true
		}
	}
	if calls < 40 || bad < 10 || len(providers) < 3 {
		t.Fatalf("%d calls, %d errors, providers %v: the test reads too little", calls, bad, providers)
	}
}

// Passing over the lines that move no usage changes nothing: over the
// real rollouts, a generated one and lines shaped to hide or fake a kind,
// the usage parser finds the calls and keeps the state the parser that
// reads every line whole finds and keeps. Only a damaged line passed over
// is not reported (as a Claude Code line without tokens is not).
func TestUsagePassOverAgreesWithWholeLines(t *testing.T) {
	lines := rolloutLines(t)
	count := func(n int) []byte {
		return fmt.Appendf(nil, `{"timestamp":"2026-11-21T22:12:21.121Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"output_tokens":5,"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"output_tokens":5,"total_tokens":%d}}}}`, n, n+5, n, n+5)
	}
	lines = append(lines,
		// the kind written as Codex never writes it: read whole
		[]byte(`{"timestamp":"2026-11-21T22:12:22.000Z", "type" : "turn_context", "payload": {"model": "spaced-model"}}`),
		count(100),
		[]byte(`{"timestamp":"2026-11-21T22:12:22.000Z","type":"turn\u005fcontext","payload":{"model":"escaped-model"}}`),
		count(200),
		[]byte(`{"timestamp":"2026-11-21T22:12:22.000Z","type":"session_meta","payload":{"id":"s-2","cwd":"/p2","model_provider":"p2"}}`),
		count(300),
		// kinds inside text, or nested where the parser does not look
		[]byte(`{"timestamp":"2026-11-21T22:12:23.000Z","type":"response_item","payload":{"type":"function_call_output","output":"{\"type\":\"token_count\",\"info\":{}}"}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:23.000Z","type":"response_item","payload":{"type":"message","content":[{"type":"token_count","info":{"last_token_usage":{"input_tokens":9,"total_tokens":9}}}]}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:23.000Z","type":"response_item","payload":{"a\"type":"turn_context","model":"no-model"}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:23.000Z","type":"event_msg","payload":{"type":"agent_message","message":"\\"}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:23.000Z","type":"event_msg","payload":{"type":"agent_message","message":"say \"type\":\"turn_context\""}}`),
		// a call repeated verbatim, around a compaction
		count(400), count(400),
		[]byte(`{"timestamp":"2026-11-21T22:12:24.000Z","type":"compacted","payload":{"message":""}}`),
		count(400),
		[]byte(`{"timestamp":"2026-11-21T22:12:24.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t9"}}`),
		count(400),
		// damaged
		[]byte(`{"timestamp":"2026-11-21T22:12:25.000Z","type":"response_item","payload":{"type":"message","text":"\q"}}`),
		[]byte(`{"timestamp":"2026-11-21T22:12:25.000Z","type":"response_item","payload":{"type":"message"`),
		[]byte(`"type":"response_item"`),
		[]byte(`{"timestamp":"2026-11-21T22:12:25.000Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"total_tokens":1`),
		count(500),
	)

	over := Harness{}.NewUsageParser("/h/.codex/sessions/rollout-x.jsonl", nil).(*usageParser)
	whole := Harness{}.NewUsageParser("/h/.codex/sessions/rollout-x.jsonl", nil).(*usageParser)
	whole.wholeLines = true
	calls, passed, models := 0, 0, map[string]bool{}
	for i, line := range lines {
		got, gotErr := over.Parse(nil, line)
		want, wantErr := whole.Parse(nil, line)
		skipped := passOver(line)
		if skipped {
			passed++
		}
		switch {
		case gotErr != nil && wantErr == nil:
			t.Fatalf("line %d: error %v, reading it whole none\n%s", i, gotErr, line)
		case gotErr == nil && wantErr != nil && !skipped:
			t.Fatalf("line %d: no error, reading it whole %v\n%s", i, wantErr, line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d: %+v, reading it whole %+v\n%s", i, got, want, line)
		}
		if g, w := over.State(), whole.State(); !bytes.Equal(g, w) {
			t.Fatalf("line %d: state %s, reading it whole %s\n%s", i, g, w, line)
		}
		calls += len(got)
		for _, e := range got {
			models[e.Model] = true
		}
	}
	if calls < 20 || passed < len(lines)/3 || !models["spaced-model"] || !models["escaped-model"] {
		t.Fatalf("%d calls, %d of %d lines passed over, models %v: the test reads too little", calls, passed, len(lines), models)
	}
}

// rolloutLines are the lines of the real rollouts and of a generated one.
func rolloutLines(t *testing.T) [][]byte {
	var lines [][]byte
	for _, name := range []string{"testdata/codex-compact-rollout.jsonl", "testdata/codex-tool-turn.rollout.jsonl"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, splitAll(data)...)
	}
	return append(lines, splitAll(genRollout(20))...)
}

package claude

import (
	"bufio"
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// The fast pass of a usage parser finds the calls the transcript's own
// parser finds, line by line, in the real transcripts and in lines
// shaped to send it to that parser.
func TestUsageFastPassAgreesWithTheParser(t *testing.T) {
	var lines [][]byte
	for _, name := range []string{"testdata/claude-compact-transcript.jsonl", "testdata/claude-tool-turn.transcript.jsonl"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
	}
	const base = `"type":"assistant","sessionId":"s1","timestamp":"2026-11-01T08:00:00Z","requestId":"req_1"`
	shaped := []string{
		`{` + base + `,"message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"a \"quoted\" \\ brace } ]"}],"usage":{"input_tokens":3,"cache_creation_input_tokens":4,"cache_read_input_tokens":5,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_2","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":6},"usage":{"input_tokens":30,"output_tokens":60}}}`,
		`{` + base + `,"message":{"id":"msg_3","Model":"claude-opus-4-1","usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_4","model":"claude-sonnet-4-5","usage":{"input_tokens":3.0,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_5","model":"claude-sonnet-4-5","usage":null}}`,
		`{` + base + `,"message":{"id":"msg_6","model":"claude-sonnet-4-5","usage":{"input_tokens":null,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_7","model":"claude-\u0073onnet-4-5","usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_8","model":"<synthetic>","usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_9","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":6}}} trailing`,
		`{"type":"user","sessionId":"s1","message":{"role":"user","usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{"typ\u0065":"assistant","sessionId":"s1","requestId":"req_1","message":{"id":"msg_10","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{"type":"assistant","ſessionId":"s9","sessionId":"s1","requestId":"req_11","message":{"id":"msg_11","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_12","model":"claude-sonnet-4-5-é","usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_13","model":"claude-sonnet-4-5-` + "\xff" + `","usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_14","model":"claude-sonnet-4-5","content":[{"type":"text","text":"été \"usage\":{\"input_tokens\":9} ` + strings.Repeat("x", 100) + `"}],"usage":{"input_tokens":3,"output_tokens":6}}}`,
		`{` + base + `,"message":{"id":"msg_15","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":6,"Cache_read_input_tokens":5}}}`,
	}
	for _, s := range shaped {
		lines = append(lines, []byte(s))
	}
	fast := Harness{}.NewUsageParser("/h/.claude/projects/p/s.jsonl", nil).(*usageParser)
	whole := Harness{}.NewUsageParser("/h/.claude/projects/p/s.jsonl", nil).(*usageParser)
	calls := 0
	prevKey := ""
	for i, line := range lines {
		got, gotErr := fast.Parse(nil, line)
		var want []adapters.UsageEntry
		var wantErr error
		if bytes.Contains(line, usageKey) {
			want, wantErr = whole.parseWhole(nil, line)
		} else {
			want, wantErr = whole.Parse(nil, line)
		}
		if len(want) == 1 && want[0].Key != "" && want[0].Key == prevKey {
			want = nil // the fast pass drops the repeat of the call before
		} else if len(want) == 1 {
			prevKey = want[0].Key
		}
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("line %d: fast pass error %v, the parser's %v\n%s", i, gotErr, wantErr, line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d: fast pass %+v, the parser %+v\n%s", i, got, want, line)
		}
		calls += len(got)
	}
	if calls < 10 {
		t.Fatalf("only %d calls found: the test reads too little", calls)
	}
}

package gemini

import (
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/telemetry"
)

// BenchmarkParserTurn parses one tool turn shaped like the CLI's (a
// prompt, the model record twice — with tokens, then with its toolCalls
// and the tool's 3 KB output —, the function response, the answer, and a
// $set lastUpdated after each).
func BenchmarkParserTurn(b *testing.B) {
	out := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 70)
	set := `{"$set":{"lastUpdated":"2026-11-01T08:00:01.400Z"}}`
	lines := []string{
		`{"id":"u1","timestamp":"2026-11-01T08:00:01.400Z","type":"user","content":[{"text":"please ` + out[:200] + `"}]}`, set,
		`{"id":"m1","timestamp":"2026-11-01T08:00:01.400Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":20000,"output":40,"cached":0,"thoughts":0,"tool":0,"total":20040},"model":"gemini-2.5-flash"}`, set,
		`{"id":"m1","timestamp":"2026-11-01T08:00:01.400Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":20000,"output":40,"cached":0,"thoughts":0,"tool":0,"total":20040},"model":"gemini-2.5-flash","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"cat notes.txt"},"result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"` + out + `"}}}],"status":"success"}]}`,
		`{"id":"r1","timestamp":"2026-11-01T08:00:01.400Z","type":"user","content":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"` + out + `"}}}]}`, set,
		`{"id":"a1","timestamp":"2026-11-01T08:00:01.400Z","type":"gemini","content":"` + out[:600] + `","thoughts":[],"tokens":{"input":21200,"output":150,"cached":0,"thoughts":0,"tool":0,"total":21350},"model":"gemini-2.5-flash"}`, set,
	}
	var raw [][]byte
	n := 0
	for _, l := range lines {
		raw = append(raw, []byte(l))
		n += len(l) + 1
	}
	b.SetBytes(int64(n))
	p := NewParser(0)
	var dst []telemetry.Observation
	for b.Loop() {
		for _, l := range raw {
			dst, _ = p.Parse(dst[:0], l, telemetry.Provenance{})
		}
	}
}

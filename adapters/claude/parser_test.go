package claude_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/telemetry"
)

const sid = "50b5cee6-b206-49d4-b2a9-c196226154be"

func cUser(uuid, prompt, content string, extra string) string {
	if content == "" {
		content = fmt.Sprintf("%q", prompt)
	}
	return `{"parentUuid":null,"isSidechain":false,"promptId":"` + prompt + `-id","type":"user","message":{"role":"user","content":` + content + `},"uuid":"` + uuid + `","timestamp":"2026-11-21T22:12:16.835Z","userType":"external","cwd":"/p","sessionId":"` + sid + `","version":"2.1.197"` + extra + `}`
}

func cAsst(msgID, reqID, model, stop string, in, cc, cr, out int, extra string) string {
	req := ""
	if reqID != "" {
		req = `,"requestId":"` + reqID + `"`
	}
	return `{"parentUuid":"x","isSidechain":false,"message":{"id":"` + msgID + `","type":"message","role":"assistant","model":"` + model + `","content":[{"type":"text","text":"hi"}],"stop_reason":"` + stop + `","usage":{"input_tokens":` + fmt.Sprint(in) + `,"cache_creation_input_tokens":` + fmt.Sprint(cc) + `,"cache_read_input_tokens":` + fmt.Sprint(cr) + `,"output_tokens":` + fmt.Sprint(out) + `,"service_tier":"standard"}},"type":"assistant","uuid":"a-` + msgID + `","timestamp":"2026-11-21T22:12:17.000Z","cwd":"/p","sessionId":"` + sid + `"` + req + extra + `}`
}

const toolResult = `[{"tool_use_id":"toolu_1","type":"tool_result","content":"ok","is_error":false}]`

// summary renders the fields a test cares about.
func summary(o telemetry.Observation) string {
	s := string(o.Kind)
	if o.FrameID != "" {
		s += " frame=" + o.FrameID
	}
	if o.ParentFrameID != "" {
		s += " parent=" + o.ParentFrameID
	}
	if o.Tokens != 0 || o.Kind == telemetry.ObsUsage {
		s += fmt.Sprintf(" tokens=%d", o.Tokens)
	}
	if o.Window != 0 {
		s += fmt.Sprintf(" window=%d", o.Window)
	}
	if o.Trigger != "" {
		s += " trigger=" + o.Trigger
	}
	if o.PreTokens != 0 || o.PostTokens != 0 {
		s += fmt.Sprintf(" pre=%d post=%d", o.PreTokens, o.PostTokens)
	}
	if o.Kind == telemetry.ObsHarnessSession {
		s += " id=" + o.HarnessSessionID
		if o.Cwd != "" {
			s += " cwd=" + o.Cwd
		}
	}
	if o.Level != "" {
		s += fmt.Sprintf(" level=%s->%s", o.Previous, o.Level)
	}
	return s
}

func parseAll(t *testing.T, p telemetry.Parser, lines []string) (got []string, errs int) {
	t.Helper()
	var obs []telemetry.Observation
	for i, l := range lines {
		var err error
		n := len(obs)
		obs, err = p.Parse(obs, []byte(l), telemetry.Provenance{Path: "f.jsonl", Line: int64(i + 1), Kind: p.SourceKind()})
		if err != nil {
			errs++
		}
		for _, o := range obs[n:] {
			// A held-back observation (a compaction) keeps the line it
			// came from, which is never a later one.
			if o.Source.Line > int64(i+1) || (o.Kind != telemetry.ObsCompacted && o.Source.Line != int64(i+1)) {
				t.Errorf("observation %s has line %d, delivered at line %d", o.Kind, o.Source.Line, i+1)
			}
		}
	}
	for _, o := range obs {
		got = append(got, summary(o))
	}
	return got, errs
}

func TestClaudeParser(t *testing.T) {
	const opus = "claude-opus-4-8"
	tests := []struct {
		name  string
		cfg   claude.WindowConfig
		lines []string
		want  []string
		errs  int
	}{
		{
			name: "tool turn",
			lines: []string{
				`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-21T22:12:16.806Z","sessionId":"` + sid + `","content":"RUN"}`,
				`{"parentUuid":null,"isSidechain":false,"attachment":{"type":"hook_success"},"type":"attachment","uuid":"u0","timestamp":"2026-11-21T22:12:16.781Z","sessionId":"` + sid + `"}`,
				cUser("u1", "RUN", "", ""),
				cAsst("m1", "", opus, "tool_use", 12, 0, 0, 5, ""),
				cUser("u2", "RUN", toolResult, ""),
				cAsst("m2", "", opus, "end_turn", 12, 100, 1000, 5, ""),
				`{"type":"last-prompt","lastPrompt":"RUN","sessionId":"` + sid + `"}`,
			},
			want: []string{
				"harness_session id=" + sid,
				"frame_opening frame=RUN-id",
				"frame_opened frame=RUN-id",
				"usage frame=RUN-id tokens=17 window=1000000",
				"usage frame=RUN-id tokens=1117 window=1000000",
				"frame_ended frame=RUN-id trigger=end_turn",
			},
		},
		{
			// Claude Code 2.1.197 sometimes appends the answer before the
			// prompt line (which carries the earlier timestamp): the turn
			// still opens, is answered and ends, at the prompt line.
			name: "answer written before its prompt line",
			lines: []string{
				cAsst("m1", "", opus, "end_turn", 100, 0, 0, 5, ""),
				cUser("u1", "RUN", "", ""),
				cUser("u2", "next", "", ""),
			},
			want: []string{
				"harness_session id=" + sid,
				"usage tokens=105 window=1000000",
				"frame_opening frame=RUN-id",
				"frame_opened frame=RUN-id",
				"frame_ended frame=RUN-id trigger=end_turn",
				"frame_opening frame=next-id",
			},
		},
		{
			// An answer older than the next prompt is not that prompt's.
			name: "an earlier stray answer is not the next prompt's",
			lines: []string{
				cAsst("m1", "", opus, "end_turn", 100, 0, 0, 5, `,"timestamp":"2026-11-21T22:12:15.000Z"`),
				cUser("u1", "RUN", "", ""),
			},
			want: []string{
				"harness_session id=" + sid,
				"usage tokens=105 window=1000000",
				"frame_opening frame=RUN-id",
			},
		},
		{
			// As Claude Code 2.1.197 writes a typed /exit: caveat, command
			// and output lines, then a "<synthetic>" assistant line with
			// zero usage. None of it reaches the model: no frame, and the
			// pressure level is not reset by the zeros.
			name: "local slash command opens no frame and reports no usage",
			lines: []string{
				cUser("u1", "RUN", "", ""),
				cAsst("m1", "", opus, "end_turn", 50000, 0, 0, 5, ""),
				cUser("u2", "exit", `"<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>"`, `,"isMeta":false`),
				cUser("u3", "exit", `"<command-name>/exit</command-name>\n<command-message>exit</command-message>\n<command-args></command-args>"`, ""),
				cUser("u4", "exit", `"<local-command-stdout>See ya!</local-command-stdout>"`, ""),
				cAsst("m2", "", "<synthetic>", "stop_sequence", 0, 0, 0, 0, ""),
				cUser("u5", "next", "", ""),
				cAsst("m3", "", opus, "end_turn", 60000, 0, 0, 5, ""),
			},
			want: []string{
				"harness_session id=" + sid,
				"frame_opening frame=RUN-id",
				"frame_opened frame=RUN-id",
				"usage frame=RUN-id tokens=50005 window=1000000",
				"frame_ended frame=RUN-id trigger=end_turn",
				"frame_opening frame=next-id",
				"frame_opened frame=next-id",
				"usage frame=next-id tokens=60005 window=1000000",
				"frame_ended frame=next-id trigger=end_turn",
			},
		},
		{
			name: "usage deduplicated by message id and request id",
			lines: []string{
				cUser("u1", "p", "", ""),
				cAsst("m1", "r1", opus, "", 10, 0, 0, 1, ""),
				cAsst("m1", "r1", opus, "tool_use", 10, 0, 0, 1, ""),
				cAsst("m1", "r2", opus, "end_turn", 10, 0, 0, 2, ""),
			},
			want: []string{
				"harness_session id=" + sid,
				"frame_opening frame=p-id",
				"frame_opened frame=p-id",
				"usage frame=p-id tokens=11 window=1000000",
				"usage frame=p-id tokens=12 window=1000000",
				"frame_ended frame=p-id trigger=end_turn",
			},
		},
		{
			name: "meta and compact summary lines open no frame; compaction",
			lines: []string{
				cUser("u1", "caveat", "", `,"isMeta":true`),
				`{"parentUuid":null,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2026-11-21T22:02:24.200Z","uuid":"s1","level":"info","compactMetadata":{"trigger":"auto","preTokens":191332,"durationMs":550,"postTokens":639},"sessionId":"` + sid + `"}`,
				cUser("u2", "summary", "", `,"isVisibleInTranscriptOnly":true,"isCompactSummary":true`),
			},
			want: []string{
				"harness_session id=" + sid,
				"compacted trigger=auto pre=191332 post=639",
			},
		},
		{
			name: "windows by model and overrides",
			cfg:  claude.WindowConfig{},
			lines: []string{
				cAsst("m1", "", "claude-sonnet-4-5", "", 1, 0, 0, 0, ""),
				cAsst("m2", "", "claude-sonnet-4-5[1m]", "", 1, 0, 0, 0, ""),
				cAsst("m3", "", opus, "", 1, 0, 0, 0, ""),
			},
			want: []string{
				"harness_session id=" + sid,
				"usage tokens=1 window=200000",
				"usage tokens=1 window=1000000",
				"usage tokens=1 window=1000000",
			},
		},
		{
			name: "auto-compact window override",
			cfg:  claude.WindowConfig{AutoCompactWindow: 150000, MaxContextTokens: 500000},
			lines: []string{
				cAsst("m1", "", opus, "", 1, 0, 0, 0, ""),
			},
			want: []string{"harness_session id=" + sid, "usage tokens=1 window=150000"},
		},
		{
			name: "max context override",
			cfg:  claude.WindowConfig{MaxContextTokens: 500000},
			lines: []string{
				cAsst("m1", "", "claude-haiku-4-5", "", 1, 0, 0, 0, ""),
			},
			want: []string{"harness_session id=" + sid, "usage tokens=1 window=500000"},
		},
		{
			name: "sidechain is a subcall frame of the turn",
			lines: []string{
				cUser("u1", "main", "", ""),
				cAsst("m1", "", opus, "tool_use", 5, 0, 0, 1, ""),
				strings.Replace(cUser("s1", "sub", "", `,"agentId":"agent-7"`), `"isSidechain":false`, `"isSidechain":true`, 1),
				strings.Replace(cAsst("s2", "", opus, "end_turn", 500, 0, 0, 1, ""), `"isSidechain":false`, `"isSidechain":true`, 1),
				cUser("u3", "main", toolResult, ""),
				cAsst("m3", "", opus, "end_turn", 6, 0, 0, 1, ""),
			},
			want: []string{
				"harness_session id=" + sid,
				"frame_opening frame=main-id",
				"frame_opened frame=main-id",
				"usage frame=main-id tokens=6 window=1000000",
				"frame_opening frame=agent-7 parent=main-id",
				"frame_ended frame=agent-7 parent=main-id trigger=end_turn",
				"usage frame=main-id tokens=7 window=1000000",
				"frame_ended frame=main-id trigger=end_turn",
			},
		},
		{
			name: "api error ends the turn",
			lines: []string{
				cUser("u1", "hi", "", ""),
				cAsst("e1", "", "<synthetic>", "stop_sequence", 0, 0, 0, 0, `,"isApiErrorMessage":true,"error":"authentication_failed"`),
			},
			want: []string{
				"harness_session id=" + sid,
				"frame_opening frame=hi-id",
				"frame_opened frame=hi-id",
				"api_error frame=hi-id trigger=authentication_failed",
				"frame_ended frame=hi-id trigger=api_error",
			},
		},
		{
			name:  "unusable lines are errors",
			lines: []string{`not json`, `[1,2]`, `{"no":"type"}`, `{"type":"user","message":"odd"}`},
			errs:  4,
		},
		{
			name: "session id change is reported",
			lines: []string{
				`{"type":"mode","sessionId":"a"}`,
				`{"type":"mode","sessionId":"a"}`,
				`{"type":"mode","sessionId":"b"}`,
			},
			want: []string{"harness_session id=a", "harness_session id=b"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := parseAll(t, claude.NewParser(tc.cfg), tc.lines)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if errs != tc.errs {
				t.Errorf("errors = %d, want %d", errs, tc.errs)
			}
		})
	}
}

func FuzzClaudeParser(f *testing.F) {
	f.Add([]byte(cUser("u1", "p", "", "")))
	f.Add([]byte(cAsst("m1", "r", "claude-opus-4-8", "end_turn", 1, 2, 3, 4, "")))
	f.Add([]byte(`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":1,"postTokens":2}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p := claude.NewParser(claude.WindowConfig{})
		obs, err := p.Parse(nil, line, telemetry.Provenance{})
		if err != nil && len(obs) != 0 {
			t.Fatalf("error %v with %d observations", err, len(obs))
		}
		for _, o := range obs {
			if o.Kind == telemetry.ObsUsage && o.Window <= 0 {
				t.Fatalf("usage without window: %+v", o)
			}
		}
		// A second pass over the same line must not panic either.
		_, _ = p.Parse(nil, line, telemetry.Provenance{})
	})
}

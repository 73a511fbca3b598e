package opencode

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// Records in the shape OpenCode 1.18.33 writes them (see the fixture
// tests for the real ones); these cover what the fixture does not.
func userMsg(id string, created int) string {
	return fmt.Sprintf(`{"seq":1,"type":"message.updated.1","data":{"sessionID":"ses_a","info":{"id":%q,"sessionID":"ses_a","role":"user","time":{"created":%d}}}}`, id, created)
}

func textPart(msg, extra string) string {
	return fmt.Sprintf(`{"seq":1,"type":"message.part.updated.1","data":{"sessionID":"ses_a","part":{"id":"prt_%s","messageID":%q,"type":"text","text":"x"%s},"time":5}}`, msg, msg, extra)
}

func compactionPart(msg string, auto bool) string {
	return fmt.Sprintf(`{"seq":1,"type":"message.part.updated.1","data":{"sessionID":"ses_a","part":{"id":"prt_%s","messageID":%q,"type":"compaction","auto":%v},"time":5}}`, msg, msg, auto)
}

func asstMsg(id, parent, extra string) string {
	return fmt.Sprintf(`{"seq":1,"type":"message.updated.1","data":{"sessionID":"ses_a","info":{"id":%q,"sessionID":"ses_a","role":"assistant","parentID":%q,"modelID":"mock-model","providerID":"mock","time":{"created":7%s}}}}`, id, parent, extra)
}

func stepFinish(msg string, total int) string {
	return fmt.Sprintf(`{"seq":1,"type":"message.part.updated.1","data":{"sessionID":"ses_a","part":{"id":"prt_sf_%s","messageID":%q,"type":"step-finish","reason":"stop","tokens":{"total":%d,"input":%d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}},"time":8}}`, msg, msg, total, total)
}

func TestParserRules(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{
			name: "tool call then answer, re-updates settled once",
			lines: []string{
				userMsg("msg_u1", 1), textPart("msg_u1", ""),
				asstMsg("msg_a1", "msg_u1", ""), stepFinish("msg_a1", 100),
				asstMsg("msg_a1", "msg_u1", `},"finish":"tool-calls","x":{`), asstMsg("msg_a1", "msg_u1", `,"completed":9},"finish":"tool-calls","x":{`),
				asstMsg("msg_a2", "msg_u1", ""), stepFinish("msg_a2", 150),
				asstMsg("msg_a2", "msg_u1", `,"completed":9},"finish":"stop","x":{`),
				asstMsg("msg_a2", "msg_u1", `,"completed":9},"finish":"stop","x":{`),
				userMsg("msg_u1", 1),
			},
			want: []string{
				"harness_session id=ses_a",
				"frame_opening frame=msg_u1", "frame_opened frame=msg_u1",
				"usage frame=msg_u1 tokens=100 window=1000",
				"usage frame=msg_u1 tokens=150 window=1000",
				"frame_ended frame=msg_u1 trigger=stop",
			},
		},
		{
			name: "aborted turn",
			lines: []string{
				userMsg("msg_u1", 1), textPart("msg_u1", ""),
				asstMsg("msg_a1", "msg_u1", `,"completed":9},"error":{"name":"MessageAbortedError"},"x":{`),
			},
			want: []string{"harness_session id=ses_a", "frame_opening frame=msg_u1", "frame_opened frame=msg_u1", "frame_ended frame=msg_u1 trigger=aborted"},
		},
		{
			name: "API error ends the turn",
			lines: []string{
				userMsg("msg_u1", 1), textPart("msg_u1", ""),
				asstMsg("msg_a1", "msg_u1", `,"completed":9},"error":{"name":"APIError"},"x":{`),
			},
			want: []string{"harness_session id=ses_a", "frame_opening frame=msg_u1", "frame_opened frame=msg_u1", "api_error frame=msg_u1 trigger=APIError", "frame_ended frame=msg_u1 trigger=error"},
		},
		{
			name: "prompt queued in a busy turn",
			lines: []string{
				userMsg("msg_u1", 1), textPart("msg_u1", ""),
				asstMsg("msg_a1", "msg_u1", ""),
				userMsg("msg_u2", 2), textPart("msg_u2", ""),
				asstMsg("msg_a2", "msg_u2", `,"completed":9},"finish":"stop","x":{`),
			},
			want: []string{"harness_session id=ses_a", "frame_opening frame=msg_u1", "frame_opened frame=msg_u1", "user_message frame=msg_u1", "frame_ended frame=msg_u1 trigger=stop"},
		},
		{
			name: "a prompt queued while the first is answered: one turn until the queued one is answered",
			lines: []string{
				userMsg("msg_u1", 1), textPart("msg_u1", ""),
				asstMsg("msg_a1", "msg_u1", ""),
				userMsg("msg_u2", 2), textPart("msg_u2", ""),
				asstMsg("msg_a1", "msg_u1", `,"completed":9},"finish":"stop","x":{`),
				asstMsg("msg_a2", "msg_u2", ""),
				asstMsg("msg_a2", "msg_u2", `,"completed":9},"finish":"stop","x":{`),
			},
			want: []string{"harness_session id=ses_a", "frame_opening frame=msg_u1", "frame_opened frame=msg_u1", "user_message frame=msg_u1", "frame_ended frame=msg_u1 trigger=stop"},
		},
		{
			name: "manual compaction between turns, its usage not the context",
			lines: []string{
				userMsg("msg_u1", 1), textPart("msg_u1", ""),
				asstMsg("msg_a1", "msg_u1", ""), stepFinish("msg_a1", 800),
				asstMsg("msg_a1", "msg_u1", `,"completed":9},"finish":"stop","x":{`),
				userMsg("msg_c1", 3), compactionPart("msg_c1", false),
				asstMsg("msg_s1", "msg_c1", `},"mode":"compaction","summary":true,"x":{`), stepFinish("msg_s1", 900),
				asstMsg("msg_s1", "msg_c1", `,"completed":9},"mode":"compaction","summary":true,"finish":"stop","x":{`),
			},
			want: []string{
				"harness_session id=ses_a", "frame_opening frame=msg_u1", "frame_opened frame=msg_u1",
				"usage frame=msg_u1 tokens=800 window=1000", "frame_ended frame=msg_u1 trigger=stop",
				"compacted window=1000 trigger=manual pre=800 post=0",
			},
		},
		{
			name: "drift: step-finish tokens renamed (the message's own tokens still read)",
			lines: []string{
				userMsg("msg_u1", 1), textPart("msg_u1", ""),
				asstMsg("msg_a1", "msg_u1", ""),
				`{"seq":1,"type":"message.part.updated.1","data":{"sessionID":"ses_a","part":{"id":"prt_sf","messageID":"msg_a1","type":"step-finish","usage":{"totalTokens":5}},"time":8}}`,
				`{"seq":1,"type":"message.part.updated.1","data":{"sessionID":"ses_a","part":{"id":"prt_sf2","messageID":"msg_a1","type":"step-finish","tokens":{"sum":5}},"time":8}}`,
				asstMsg("msg_a1", "msg_u1", `,"completed":9},"finish":"stop","x":{`),
			},
			want: []string{
				"harness_session id=ses_a", "frame_opening frame=msg_u1", "frame_opened frame=msg_u1",
				"unreadable frame=msg_u1", "unreadable frame=msg_u1", "frame_ended frame=msg_u1 trigger=stop",
			},
		},
		{
			name:  "not a record",
			lines: []string{`[1]`, `{}`, `nope`},
		},
	}
	win := func(p, m string) int64 { return map[string]int64{"mock/mock-model": 1000}[p+"/"+m] }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := telemetrytest.ParseAll(t, NewParser(win), tc.lines)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestParserMemoryBounded: user messages whose parts never come and
// settled ids are capped.
func TestParserMemoryBounded(t *testing.T) {
	p := NewParser(nil)
	var lines []string
	for i := range 5000 {
		lines = append(lines, userMsg(fmt.Sprintf("msg_p%05d", i), i))
		lines = append(lines, asstMsg(fmt.Sprintf("msg_a%05d", i), "msg_none", `,"completed":9},"finish":"stop","x":{`))
	}
	telemetrytest.ParseAll(t, p, lines)
	if len(p.pending) > 64 || len(p.settled.m) > settledCap || len(p.asst) != 0 {
		t.Errorf("pending %d, settled %d, assistants %d", len(p.pending), len(p.settled.m), len(p.asst))
	}
}

func TestWindowsFromConfig(t *testing.T) {
	home := t.TempDir()
	proj := home + "/work/sub"
	telemetrytest.WriteFile(t, home+"/.cache/opencode/models.json", `{"anthropic":{"models":{"claude-x":{"limit":{"context":200000,"output":32000}}}},"mock":{"models":{"mock-model":{"limit":{"context":1}}}}}`)
	telemetrytest.WriteFile(t, home+"/.config/opencode/opencode.jsonc", "{\n // the mock\n \"provider\": {\"mock\": {\"models\": {\"mock-model\": {\"limit\": {\"context\": 5000, /* small */ \"output\": 100,},},},},},\n}")
	telemetrytest.WriteFile(t, home+"/work/opencode.json", `{"provider":{"mock":{"models":{"other":{"limit":{"context":7000}}}}}}`)
	telemetrytest.WriteFile(t, proj+"/.opencode/opencode.json", `{"provider":{"mock":{"models":{"other":{"limit":{"context":8000}}}}}}`)
	env := []string{"HOME=" + home, `OPENCODE_CONFIG_CONTENT={"provider":{"cli":{"models":{"m":{"limit":{"context":42}}}}}}`}
	w := loadWindows(env, proj)
	for k, want := range map[string]int64{"anthropic/claude-x": 200000, "mock/mock-model": 5000, "mock/other": 8000, "cli/m": 42, "none/x": 0} {
		p, m, _ := strings.Cut(k, "/")
		if got := w.window(p, m); got != want {
			t.Errorf("window %s = %d, want %d", k, got, want)
		}
	}
	if got := string(stripJSONC([]byte(`{"a":"// not a comment, /* nor this */","b":[1,2,],}`))); got != `{"a":"// not a comment, /* nor this */","b":[1,2]}` {
		t.Errorf("stripJSONC: %s", got)
	}
}

// FuzzParser: any record, alone or after a turn that is still open,
// parses without panicking, and a rejected record yields nothing.
func FuzzParser(f *testing.F) {
	f.Add([]byte(userMsg("msg_u1", 1)))
	f.Add([]byte(textPart("msg_u1", `,"synthetic":true,"metadata":{"compaction_continue":true}`)))
	f.Add([]byte(compactionPart("msg_c1", true)))
	f.Add([]byte(asstMsg("msg_a1", "msg_u1", `,"completed":9},"error":{"name":"X"},"x":{`)))
	f.Add([]byte(stepFinish("msg_a1", 5)))
	f.Fuzz(func(t *testing.T, line []byte) {
		p := NewParser(func(string, string) int64 { return 100 })
		obs, err := p.Parse(nil, line, telemetry.Provenance{})
		if err != nil && len(obs) != 0 {
			t.Fatalf("error %v with %d observations", err, len(obs))
		}
		for _, l := range []string{userMsg("msg_u1", 1), textPart("msg_u1", ""), asstMsg("msg_a1", "msg_u1", "")} {
			_, _ = p.Parse(nil, []byte(l), telemetry.Provenance{})
		}
		_, _ = p.Parse(nil, line, telemetry.Provenance{})
	})
}

package gemini

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

func TestProjectHash(t *testing.T) {
	// The real CLI (0.61.0) recorded this projectHash for a session run
	// in /tmp/TestGeminiProbe3979392577/001/project.
	const dir, want = "/tmp/TestGeminiProbe3979392577/001/project", "9820c9c7ac43f3643f0f2c557e47ac217bdf378b8e119ae3c76ed246fef53847"
	if got := ProjectHash(dir); got != want {
		t.Errorf("ProjectHash(%s) = %s, want %s", dir, got, want)
	}
}

func TestDiscoverer(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, ".gemini")
	cwd := filepath.Join(base, "proj")
	other := filepath.Join(base, "elsewhere")
	for _, d := range []string{cwd, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	chat := func(folder, name, sid, dir, kind string) string {
		p := filepath.Join(home, "tmp", folder, "chats", name)
		telemetrytest.WriteFile(t, p, `{"sessionId":"`+sid+`","projectHash":"`+ProjectHash(dir)+`","startTime":"2026-11-23T13:46:35.419Z","kind":"`+kind+`"}`+"\n")
		return p
	}
	old := chat("proj", "session-2026-11-23T13-40-aaaaaaaa.jsonl", "aaaaaaaa-1", cwd, "main")
	time.Sleep(20 * time.Millisecond)
	launch := telemetrytest.LaunchAfter(t)
	mine := chat("proj", "session-2026-11-23T13-46-bbbbbbbb.jsonl", "bbbbbbbb-2", cwd, "main")
	chat("proj-1", "session-2026-11-23T13-46-cccccccc.jsonl", "cccccccc-3", other, "main")
	chat("proj", "session-2026-11-23T13-46-dddddddd.jsonl", "dddddddd-4", cwd, "subagent")
	telemetrytest.WriteFile(t, filepath.Join(home, "tmp", "proj", "chats", "session-2026-11-23T13-47-eeeeeeee.jsonl"), `{"sessionId":"ee`) // no full line yet

	d := &Discoverer{Home: home, Cwd: cwd, Launch: launch, Slack: 10 * time.Millisecond}
	cands, err := d.Candidates()
	if err != nil || !slices.Equal(telemetrytest.CandPaths(cands), []string{filepath.Base(mine)}) || cands[0].SessionID != "bbbbbbbb-2" {
		t.Errorf("candidates %v, %v; want only %s", cands, err, mine)
	}
	// A known session id finds its file whenever it was born.
	d = &Discoverer{Home: home, Cwd: cwd, Launch: time.Now().Add(time.Hour), SessionID: "aaaaaaaa-1"}
	if cands, _ := d.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), []string{filepath.Base(old)}) {
		t.Errorf("by session id: %v", cands)
	}
	// Resumed in a later minute, a session gets a second file holding only
	// a header and its context; the conversation stays in the first one,
	// which is the one found, by session id or among the new sessions.
	time.Sleep(20 * time.Millisecond)
	chat("proj", "session-2026-11-23T14-02-aaaaaaaa.jsonl", "aaaaaaaa-1", cwd, "main")
	if cands, _ := d.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), []string{filepath.Base(old)}) {
		t.Errorf("resumed in a later minute, by session id: %v", cands)
	}
	d = &Discoverer{Home: home, Cwd: cwd, Launch: launch, Slack: 10 * time.Millisecond}
	if cands, _ := d.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), []string{filepath.Base(mine)}) {
		t.Errorf("resumed in a later minute, new sessions: %v, want only %s", cands, mine)
	}
	if got := d.Roots(); !slices.Equal(got, []string{filepath.Join(home, "tmp")}) {
		t.Errorf("roots %v", got)
	}
}

// TestDiscovererReadsEachChatOnce: a chat file's first line is read once
// it is complete, not again on the next scans (it does not change); a
// line still being written is read again.
func TestDiscovererReadsEachChatOnce(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, ".gemini")
	cwd := filepath.Join(base, "proj")
	launch := telemetrytest.LaunchAfter(t)
	line := func(sid, dir string) string {
		return `{"sessionId":"` + sid + `","projectHash":"` + ProjectHash(dir) + `","startTime":"2026-11-23T13:46:35.419Z","kind":"main"}` + "\n"
	}
	chats := filepath.Join(home, "tmp", "proj", "chats")
	done := filepath.Join(chats, "session-2026-11-23T13-46-bbbbbbbb.jsonl")
	partial := filepath.Join(chats, "session-2026-11-23T13-46-cccccccc.jsonl")
	telemetrytest.WriteFile(t, done, line("bbbbbbbb-2", cwd))
	telemetrytest.WriteFile(t, partial, `{"sessionId":"cc`)
	d := &Discoverer{Home: home, Cwd: cwd, Launch: launch, Slack: 10 * time.Millisecond}
	if cands, _ := d.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), []string{filepath.Base(done)}) {
		t.Fatalf("first scan: %v", cands)
	}
	// Rewritten for another folder: the first scan's reading stands.
	telemetrytest.WriteFile(t, done, line("bbbbbbbb-2", base))
	telemetrytest.WriteFile(t, partial, line("cccccccc-3", cwd))
	want := []string{filepath.Base(done), filepath.Base(partial)}
	if cands, _ := d.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), want) {
		t.Errorf("second scan: %v, want %v", telemetrytest.CandPaths(cands), want)
	}
}

func TestTelemetrySourceReadsSettings(t *testing.T) {
	base := t.TempDir()
	cwd := filepath.Join(base, "proj")
	telemetrytest.WriteFile(t, filepath.Join(base, "h", ".gemini", "settings.json"), `{"model":{"compressionThreshold":0.7}}`)
	if th := compressionThreshold(filepath.Join(base, "h", ".gemini"), cwd); th != 0.7 {
		t.Errorf("user threshold %v", th)
	}
	telemetrytest.WriteFile(t, filepath.Join(cwd, ".gemini", "settings.json"), `{"model":{"compressionThreshold":0.25}}`)
	if th := compressionThreshold(filepath.Join(base, "h", ".gemini"), cwd); th != 0.25 {
		t.Errorf("workspace threshold %v", th)
	}
	src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=" + filepath.Join(base, "h")}, Cwd: cwd})
	if err != nil || src.Discoverer.(*Discoverer).Home != filepath.Join(base, "h", ".gemini") || src.NewParser().(*Parser).threshold != 0.25 {
		t.Errorf("source %+v, %v", src, err)
	}
	src, _ = Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=/x", "GEMINI_CLI_HOME=/y"}, Cwd: cwd})
	if src.Discoverer.(*Discoverer).Home != "/y/.gemini" {
		t.Errorf("GEMINI_CLI_HOME not honoured: %+v", src.Discoverer)
	}
	if _, err := (Harness{}).TelemetrySource(adapters.TelemetryTarget{Cwd: cwd}); err == nil {
		t.Error("no HOME: no error")
	}
}

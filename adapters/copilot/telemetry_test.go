package copilot

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// writeSession writes a session folder whose events.jsonl starts with a
// session.start recording cwd.
func writeSession(t *testing.T, home, id, cwd string) string {
	t.Helper()
	dir := filepath.Join(home, "session-state", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, eventsFile)
	line := `{"type":"session.start","data":{"sessionId":"` + id + `","copilotVersion":"1.0.102","context":{"cwd":"` + cwd + `"}},"id":"x","timestamp":"2026-12-02T05:01:21.466Z","parentId":null}` + "\n"
	if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiscovererSessionID(t *testing.T) {
	home := t.TempDir()
	want := writeSession(t, home, "11111111-2222-4333-8444-555555555555", "/elsewhere")
	writeSession(t, home, "22222222-2222-4333-8444-555555555555", "/proj")
	d := &Discoverer{Home: home, Cwd: "/proj", Launch: time.Now().Add(time.Hour), SessionID: "11111111-2222-4333-8444-555555555555"}
	c, err := d.Candidates()
	if err != nil || len(c) != 1 || c[0].Path != want || c[0].SessionID != "11111111-2222-4333-8444-555555555555" {
		t.Fatalf("Candidates = %+v, %v; want only %s (a pinned or resumed session, whenever born)", c, err, want)
	}
	if !d.SkipFolder(filepath.Join(home, "session-state", "22222222-2222-4333-8444-555555555555")) || d.SkipFolder(filepath.Dir(want)) {
		t.Error("SkipFolder does not keep to the session's folder")
	}
}

func TestDiscovererByCwdAndBirth(t *testing.T) {
	home := t.TempDir()
	launch := time.Now()
	mine := writeSession(t, home, "33333333-2222-4333-8444-555555555555", "/proj")
	writeSession(t, home, "44444444-2222-4333-8444-555555555555", "/other")
	d := &Discoverer{Home: home, Cwd: "/proj", Launch: launch.Add(-time.Second)}
	c, err := d.Candidates()
	if err != nil || len(c) != 1 || c[0].Path != mine {
		t.Fatalf("Candidates = %+v, %v; want only %s", c, err, mine)
	}
	later := &Discoverer{Home: home, Cwd: "/proj", Launch: launch.Add(time.Minute)}
	if c, _ := later.Candidates(); len(c) != 0 {
		t.Errorf("a file born before the launch is a candidate: %+v", c)
	}
}

func TestTelemetrySourceHome(t *testing.T) {
	src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=/h"}})
	if err != nil || src.Discoverer.Roots()[0] != "/h/.copilot/session-state" {
		t.Fatalf("%v %v", src.Discoverer.Roots(), err)
	}
	src, _ = Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=/h", "COPILOT_HOME=/c"}})
	if src.Discoverer.Roots()[0] != "/c/session-state" {
		t.Errorf("COPILOT_HOME: %v", src.Discoverer.Roots())
	}
	if _, err := (Harness{}).TelemetrySource(adapters.TelemetryTarget{}); err == nil {
		t.Error("no error without HOME")
	}
}

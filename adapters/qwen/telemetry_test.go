package qwen

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// writeChat writes a chat file whose first record names cwd.
func writeChat(t *testing.T, root, project, id, cwd string) string {
	t.Helper()
	dir := filepath.Join(root, "projects", project, "chats")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, id+".jsonl")
	line := `{"uuid":"u","sessionId":"` + id + `","type":"user","cwd":"` + cwd + `","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}` + "\n"
	if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiscovererSessionID(t *testing.T) {
	root := t.TempDir()
	want := writeChat(t, root, "-elsewhere", uuid, "/elsewhere")
	writeChat(t, root, "-proj", "22222222-2222-4333-8444-555555555555", "/proj")
	d := &Discoverer{Root: root, Cwd: "/proj", Launch: time.Now().Add(time.Hour), SessionID: uuid}
	c, err := d.Candidates()
	if err != nil || len(c) != 1 || c[0].Path != want || c[0].SessionID != uuid {
		t.Fatalf("Candidates = %+v, %v; want only %s (a pinned or resumed session, whenever born)", c, err, want)
	}
}

func TestDiscovererByCwdAndBirth(t *testing.T) {
	root := t.TempDir()
	launch := time.Now()
	mine := writeChat(t, root, "-proj", "33333333-2222-4333-8444-555555555555", "/proj")
	writeChat(t, root, "-other", "44444444-2222-4333-8444-555555555555", "/other")
	d := &Discoverer{Root: root, Cwd: "/proj", Launch: launch.Add(-time.Second)}
	c, err := d.Candidates()
	if err != nil || len(c) != 1 || c[0].Path != mine {
		t.Fatalf("Candidates = %+v, %v; want only %s", c, err, mine)
	}
	later := &Discoverer{Root: root, Cwd: "/proj", Launch: launch.Add(time.Minute)}
	if c, _ := later.Candidates(); len(c) != 0 {
		t.Errorf("a file born before the launch is a candidate: %+v", c)
	}
}

func TestTelemetrySourceRoot(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, "/h/.qwen/projects"},
		{[]string{"HOME=/h", "QWEN_HOME=/q"}, "/q/projects"},
		{[]string{"HOME=/h", "QWEN_HOME=/q", "QWEN_RUNTIME_DIR=/r"}, "/r/projects"},
	} {
		src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: tt.env})
		if err != nil || src.Discoverer.Roots()[0] != tt.want {
			t.Errorf("%q: roots %v, %v; want %s", tt.env, src.Discoverer.Roots(), err, tt.want)
		}
	}
	if _, err := (Harness{}).TelemetrySource(adapters.TelemetryTarget{}); err == nil {
		t.Error("no error without HOME")
	}
}

package hostassets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/hooks"
)

var bin = []string{"/opt/lifeloop/bin/lifeloop"}

const userClaude = `{
  "permissions": {
    "allow": [
      "Bash(ls:*)"
    ]
  },
  "hooks": {
    "Stop": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "touch /tmp/marker && echo '<done>'"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/guard",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "model": "opus",
  "zeta": 1.50
}
`

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name, adapter, original string
		missing                 bool
	}{
		{name: "claude with user hooks on the same and other events", adapter: "claude", original: userClaude},
		{name: "claude without hooks", adapter: "claude", original: "{\n  \"model\": \"sonnet\"\n}\n"},
		{name: "claude empty object without newline", adapter: "claude", original: "{}"},
		{name: "four-space indent", adapter: "claude", original: "{\n    \"a\": [\n        1,\n        2\n    ],\n    \"b\": {}\n}\n"},
		{name: "tab indent", adapter: "codex", original: "{\n\t\"hooks\": {\n\t\t\"Stop\": [\n\t\t\t{\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"say done\"\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t]\n\t}\n}\n"},
		{name: "codex missing file", adapter: "codex", missing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "settings.json")
			if !tt.missing {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.original), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Inspect(path, specOf(tt.adapter), bin, nil)
			if err != nil || rep.AllPresent || rep.Exists == tt.missing {
				t.Fatalf("before apply: %+v %v", rep, err)
			}
			res, err := Apply(path, specOf(tt.adapter), bin)
			if err != nil || !res.Changed {
				t.Fatalf("apply: %+v %v", res, err)
			}
			if tt.missing != (res.Backup == "") {
				t.Fatalf("backup %q", res.Backup)
			}
			if !tt.missing {
				if b, _ := os.ReadFile(res.Backup); string(b) != tt.original {
					t.Fatalf("backup holds %q", b)
				}
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
					t.Fatalf("mode %v, want the user's 0644", fi.Mode().Perm())
				}
			}
			applied, _ := os.ReadFile(path)
			for _, h := range specOf(tt.adapter).Names() {
				if !strings.Contains(string(applied), hooks.Command(bin, tt.adapter, h)) {
					t.Errorf("applied file lacks the %s hook:\n%s", h, applied)
				}
			}
			if strings.Contains(tt.original, "marker") && !strings.Contains(string(applied), `"command": "touch /tmp/marker && echo '<done>'"`) {
				t.Errorf("user hook lost or escaped:\n%s", applied)
			}
			// Apply twice: byte-identical, not rewritten.
			res2, err := Apply(path, specOf(tt.adapter), bin)
			if err != nil || res2.Changed {
				t.Fatalf("second apply: %+v %v", res2, err)
			}
			if again, _ := os.ReadFile(path); string(again) != string(applied) {
				t.Fatalf("second apply changed the file")
			}
			rep, err = Inspect(path, specOf(tt.adapter), bin, nil)
			if err != nil || !rep.AllPresent || len(rep.Hooks) != len(specOf(tt.adapter).Names()) {
				t.Fatalf("after apply: %+v %v", rep, err)
			}
			res3, err := Remove(path, specOf(tt.adapter))
			if err != nil || !res3.Changed {
				t.Fatalf("remove: %+v %v", res3, err)
			}
			back, _ := os.ReadFile(path)
			want := tt.original
			if tt.missing {
				want = "{}\n"
			}
			if string(back) != want {
				t.Fatalf("after remove:\n%s\nwant:\n%s", back, want)
			}
			if res4, _ := Remove(path, specOf(tt.adapter)); res4.Changed {
				t.Fatalf("second remove changed the file")
			}
		})
	}
}

func TestInspectDrift(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	if _, err := Apply(path, specOf("claude"), []string{"/old/place/lifeloop"}); err != nil {
		t.Fatal(err)
	}
	rep, err := Inspect(path, specOf("claude"), bin, nil)
	if err != nil || rep.AllPresent {
		t.Fatalf("%+v %v", rep, err)
	}
	for _, h := range rep.Hooks {
		if h.State != StateDrifted || !strings.HasPrefix(h.Command, "/old/place/lifeloop ") {
			t.Errorf("%+v, want drifted", h)
		}
	}
	// Apply repairs the drift in place, without adding a second entry.
	if _, err := Apply(path, specOf("claude"), bin); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "/old/place") || strings.Count(string(data), "host-hook") != len(specOf("claude").Hooks) {
		t.Fatalf("drift not repaired:\n%s", data)
	}
	// Another adapter's entries are not ours to remove.
	if _, err := Apply(path, specOf("codex"), bin); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(path, specOf("claude")); err != nil {
		t.Fatal(err)
	}
	rep, _ = Inspect(path, specOf("codex"), bin, nil)
	if !rep.AllPresent {
		t.Fatalf("removing claude's hooks removed codex's: %+v", rep)
	}
}

func TestMixedGroupKeepsUserEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	orig := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"},{"type":"command","command":"/x/lifeloop host-hook --adapter claude --hook Stop"}]}]}}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(path, specOf("claude")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"command": "mine"`) || strings.Contains(string(data), "host-hook") {
		t.Fatalf("got:\n%s", data)
	}
}

// TestRemoveOwn: a file of lifeloop's own is created by Apply (no
// backup), applied twice unchanged, and deleted with its backup by
// RemoveOwn; one the person also wrote into keeps their entry, and
// RemoveOwn on a missing file does nothing.
func TestRemoveOwn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hooks")
	path := filepath.Join(dir, "lifeloop.json")
	spec := specOf("copilot")
	if res, err := Apply(path, spec, bin); err != nil || !res.Changed || res.Backup != "" {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	if res, err := Apply(path, spec, bin); err != nil || res.Changed {
		t.Fatalf("apply again: %+v, %v", res, err)
	}
	if err := os.WriteFile(path+BackupSuffix, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := RemoveOwn(path, spec)
	if err != nil || !res.Deleted || !res.Changed {
		t.Fatalf("remove: %+v, %v", res, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in the folder: %v", left)
	}
	if res, err := RemoveOwn(path, spec); err != nil || res.Changed {
		t.Errorf("remove a missing file: %+v, %v", res, err)
	}

	if _, err := Apply(path, spec, bin); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	mine := strings.Replace(string(data), `"hooks": {`, `"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "mine"}]}],`, 1)
	if err := os.WriteFile(path, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := RemoveOwn(path, spec); err != nil || res.Deleted || !res.Changed {
		t.Fatalf("remove with an entry of the person's: %+v, %v", res, err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"mine"`) || strings.Contains(string(data), "host-hook") {
		t.Errorf("after remove:\n%s", data)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct{ name, content, adapter, want string }{
		{"not json", "{nope", "claude", "not a JSON object"},
		{"hooks not an object", `{"hooks":[]}`, "claude", `"hooks" is not an object`},
		{"event not an array", `{"hooks":{"Stop":{}}}`, "claude", "hooks.Stop is not an array"},
		{"adapter without hooks", `{}`, "generic", "no native hooks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Apply(path, specOf(tt.adapter), bin)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if data, _ := os.ReadFile(path); string(data) != tt.content {
				t.Fatalf("file changed on error")
			}
		})
	}
}

// specOf returns the hooks of a registered adapter (nil when it has none).
func specOf(id string) *hooks.Spec {
	a, err := builtin.Default().Lookup(id)
	if err != nil {
		return nil
	}
	return a.Hooks()
}

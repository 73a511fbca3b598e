package codex

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/hooks"
)

// TestPermissionRequestAttends: lifeloop installs PermissionRequest for
// attention only (host apply writes it into hooks.json with the others);
// a call (the fields of Codex's PermissionRequest input) maps to no
// moment, and the attention reader reads it as needs_permission.
func TestPermissionRequestAttends(t *testing.T) {
	spec := Harness{}.Hooks()
	if !spec.Attends("PermissionRequest") {
		t.Fatalf("PermissionRequest is not installed for attention: %v", spec.Names())
	}
	if s := string(hooks.SettingsFile(spec, []string{"/bin/lifeloop"}, nil)); !strings.Contains(s, "--hook PermissionRequest") {
		t.Errorf("hooks.json runs no PermissionRequest hook:\n%s", s)
	}
	in := []byte(`{"session_id":"s1","turn_id":"t1","transcript_path":null,"cwd":"/w","hook_event_name":"PermissionRequest","model":"mock-model","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"touch x"}}`)
	m, err := hooks.Map(spec, "codex", "PermissionRequest", in)
	if err != nil || len(m.Moments) != 0 {
		t.Errorf("PermissionRequest maps to %+v, %v; want no moment", m.Moments, err)
	}
	if f, ok := (Harness{}).AttentionEvent(in, time.Now()); !ok || f.State != adapters.AttentionNeedsPermission || f.Detail != "Bash" {
		t.Errorf("PermissionRequest reads as %+v, %v; want needs_permission about Bash", f, ok)
	}
}

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

const notificationJSON = `{"session_id":"gs-1","hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool requires confirmation","details":{"type":"exec","title":"Confirm Shell Command","rootCommand":"touch"}}`

// TestHostHookForwardsAttentionToWrapper: a hook installed for attention
// only (no moment) is forwarded to a live wrapper, whose tracker reads
// it; a wrapper that fails records nothing for it (no moment was lost);
// and with no wrapper nothing is recorded at all.
func TestHostHookForwardsAttentionToWrapper(t *testing.T) {
	root := filepath.Join(t.TempDir(), "st")
	var got hooks.HookArgs
	fakeWrapper(t, root, "w3", func(req control.Request) []byte {
		_ = json.Unmarshal(req.Args, &got)
		return []byte(`{"ok":true,"result":{"receipts":0,"response":""}}`)
	})
	opts, out := hookOpts(root, statedir.SessionDir(root, "w3"), notificationJSON, 10*time.Second)
	opts.Adapter, opts.Hook = "gemini", "Notification"
	hostHookRun(t.Context(), opts)
	if out.Len() != 0 || got.Adapter != "gemini" || got.Hook != "Notification" || string(got.Stdin) != notificationJSON {
		t.Fatalf("stdout %q; the wrapper got %+v, want the Notification call", out, got)
	}

	fakeWrapper(t, root, "w4", func(control.Request) []byte { return []byte(`{"ok":false,"error":"boom"}`) })
	opts, out = hookOpts(root, statedir.SessionDir(root, "w4"), notificationJSON, 300*time.Millisecond)
	opts.Adapter, opts.Hook = "gemini", "Notification"
	hostHookRun(t.Context(), opts)
	if _, err := os.Stat(statedir.ReceiptsPath(root, "w4")); !os.IsNotExist(err) || out.Len() != 0 {
		t.Fatalf("a failed attention call recorded something (%v) or answered %q", err, out)
	}

	opts, _ = hookOpts(root, "", notificationJSON, time.Second)
	opts.Adapter, opts.Hook = "gemini", "Notification"
	hostHookRun(t.Context(), opts)
	if m, _ := filepath.Glob(filepath.Join(root, "sessions", "*")); len(m) != 2 || !strings.Contains(strings.Join(m, " "), "w3") {
		t.Fatalf("sessions after a call with no wrapper: %v, want only the two fake wrappers'", m)
	}
}

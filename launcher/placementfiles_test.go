package launcher

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/control"
)

// TestPlacementFiles: a file in a harness's own folder is new (0600, the
// folder made 0700 when missing), named with the placement prefix and
// listed in the session folder; remove deletes every file and the list;
// after a wrapper that never removed them (killed), RemovePlacementFiles
// does, and never a listed path that is not a placement file.
func TestPlacementFiles(t *testing.T) {
	ses, home := t.TempDir(), filepath.Join(t.TempDir(), "harness-home")
	f := &placementFiles{dir: ses}
	in, err := f.write("body one")
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.target(nil).WriteIn(home, ".config.toml", "body two")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(out), adapters.PlacementFilePrefix) || !strings.HasSuffix(out, ".config.toml") || filepath.Dir(out) != home {
		t.Errorf("WriteIn path %s", out)
	}
	for p, mode := range map[string]os.FileMode{out: 0o600, home: 0o700 | os.ModeDir, in: 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode() != mode {
			t.Errorf("%s: %v, %v; want mode %v", p, st.Mode(), err, mode)
		}
	}
	if b, _ := os.ReadFile(out); string(b) != "body two" {
		t.Errorf("stored %q", b)
	}
	f.remove()
	left, _ := filepath.Glob(filepath.Join(ses, "*"))
	left2, _ := filepath.Glob(filepath.Join(home, "*"))
	if len(left)+len(left2) != 0 {
		t.Errorf("left after remove: %v %v", left, left2)
	}

	// A killed wrapper: nothing removed.
	f = &placementFiles{dir: ses}
	in, _ = f.write("body")
	out, _ = f.writeIn(home, ".config.toml", "body")
	other := filepath.Join(home, "config.toml")
	if err := os.WriteFile(other, []byte("user's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.list(other); err != nil {
		t.Fatal(err)
	}
	if err := RemovePlacementFiles(ses); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{in, out, filepath.Join(ses, outsideList)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a listed file that is no placement file was removed: %v", err)
	}
	if err := RemovePlacementFiles(ses); err != nil {
		t.Errorf("second call: %v", err)
	}
}

// TestRemoveLeftoversRemovesAFallbackSocket: a session folder whose path
// is too long for a unix socket has its control socket in the temporary
// folder; sealing the session removes it there.
func TestRemoveLeftoversRemovesAFallbackSocket(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100), "ses_01LEFTOVERTEST"+strings.Repeat("X", 8))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := control.SocketIn(dir)
	if filepath.Dir(sock) == dir {
		t.Fatalf("socket %s is not a fallback", sock)
	}
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // as a killed wrapper leaves it
	_ = ln.Close()
	t.Cleanup(func() { _ = os.Remove(sock) })
	if err := RemoveLeftovers(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("the fallback socket is still there: %v", err)
	}
}

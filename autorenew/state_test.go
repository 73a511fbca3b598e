package autorenew

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStateRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "s1")
	path := StatePath(dir)
	if filepath.Base(path) != "autorenew.json" || filepath.Dir(path) != dir {
		t.Fatalf("StatePath = %q", path)
	}
	last := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	st := State{
		Client: "lifeloop-autorenew", PID: 4242, Threshold: "70%", Resume: true, PerHour: 3, ThisHour: 2,
		Waiting: "pressure 71 % ≥ 70 %: waiting for the turn to end", GaveUp: ReasonFutile, GaveUpDetail: "d",
		LastAt: &last, LastPercent: 71.5, LastResult: Renewed.String(), UpdatedAt: last.Add(time.Minute),
	}
	if err := WriteState(path, st); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Schema = StateSchema
	if !reflect.DeepEqual(got, st) {
		t.Fatalf("ReadState = %+v\nwant %+v", got, st)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, want 0600", info.Mode().Perm())
	}
	dinfo, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if dinfo.Mode().Perm() != 0o700 {
		t.Fatalf("state folder mode %v, want 0700", dinfo.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	for _, key := range []string{`"schema": "lifeloop.autorenew.v1"`, `"renewals_this_hour": 2`, `"gave_up": "futile"`, `"last_result": "renewed"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("state file lacks %s:\n%s", key, raw)
		}
	}
	// Written again: replaced whole, no temporary file left.
	st.ThisHour = 3
	if err := WriteState(path, st); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files in the session folder: %v", entries)
	}
}

func TestReadStateMissingAndBad(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadState(StatePath(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing state: %v, want fs.ErrNotExist", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{"), 0o600)
	if _, err := ReadState(bad); err == nil {
		t.Fatal("a torn state file read without error")
	}
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"schema":"lifeloop.autorenew.v9"}`), 0o600)
	if _, err := ReadState(other); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("another schema: %v", err)
	}
}

package kit

import (
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// TestNotReadUntilWAL: a database still in rollback-journal mode (a
// harness creating it) is not opened, so lifeloop's reads never lock the
// harness's migrations out; once in WAL mode it is.
func TestNotReadUntilWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	w, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.ExecContext(t.Context(), "PRAGMA journal_mode=DELETE; CREATE TABLE t(x)"); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a rollback-journal database was opened: %v", err)
	}
	if _, err := w.ExecContext(t.Context(), "PRAGMA journal_mode=WAL"); err != nil {
		t.Fatal(err)
	}
	db, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("a WAL database was refused: %v", err)
	}
	_ = db.Close()
}

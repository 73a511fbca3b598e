package statedir_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

func TestSweepDueTakesTurns(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	if !statedir.SweepDue(root, time.Minute, now) {
		t.Fatal("a folder never swept: sweep not due")
	}
	fi, err := os.Stat(filepath.Join(root, statedir.SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != statedir.FilePerm {
		t.Errorf("stamp mode %v, want %v", fi.Mode().Perm(), statedir.FilePerm)
	}
	if statedir.SweepDue(root, time.Minute, now.Add(30*time.Second)) {
		t.Error("swept 30 s ago, interval 1 min: sweep due again")
	}
	if !statedir.SweepDue(root, time.Minute, now.Add(61*time.Second)) {
		t.Error("swept 61 s ago, interval 1 min: sweep not due")
	}
	if !statedir.SweepDue(root, time.Minute, now) {
		t.Error("stamp from the future (the clock went back): sweep not due")
	}
}

package control

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

func TestSocketInShortensLongPaths(t *testing.T) {
	dir := t.TempDir()
	if got := SocketIn(dir); got != filepath.Join(dir, "control.sock") {
		t.Fatalf("SocketIn(%s) = %s", dir, got)
	}
	long := filepath.Join(dir, strings.Repeat("x", 100), "ses_1")
	if got := SocketIn(long); len(got) >= 100 || filepath.Dir(got) == long || !strings.HasSuffix(got, "-ses_1.sock") {
		t.Fatalf("SocketIn(long) = %s, want a short path outside the folder", got)
	}
}

func TestCallRoundTripAndNotLive(t *testing.T) {
	path := SocketIn(t.TempDir())
	if _, err := GetStatus(t.Context(), path); !errors.Is(err, ErrNotLive) {
		t.Fatalf("no server: %v, want ErrNotLive", err)
	}
	srv, err := Listen(path, func(_ context.Context, req Request) (any, error) {
		if req.Op != OpStatus {
			return nil, errors.New("unknown op " + req.Op)
		}
		return Status{Activity: "idle", Alive: true}, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, err := GetStatus(t.Context(), path)
	if err != nil || !st.Alive || st.Activity != "idle" {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if err := Call(t.Context(), path, OpPause, nil, nil); err == nil || !strings.Contains(err.Error(), "unknown op pause") {
		t.Fatalf("refused op: %v", err)
	}
}

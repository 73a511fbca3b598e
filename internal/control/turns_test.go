package control

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestStatusTurnFields: status carries whether a turn is under way, when
// one last ended and when a key was last typed, each absent when unknown.
func TestStatusTurnFields(t *testing.T) {
	ended, key := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 9, 0, time.UTC)
	raw, _ := json.Marshal(Status{})
	for _, k := range []string{"frame_open", "last_frame_ended_at", "last_key_at"} {
		if strings.Contains(string(raw), k) {
			t.Errorf("an empty status has %s: %s", k, raw)
		}
	}
	path := SocketIn(t.TempDir())
	srv, err := Listen(path, func(_ context.Context, req Request) (any, error) {
		if req.Op == OpRenew {
			return nil, &Refusal{Code: CodeNotBetweenTurns, Message: "a turn is under way; nothing was done"}
		}
		return Status{FrameOpen: true, LastFrameEndedAt: &ended, LastKeyAt: &key}, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st, err := GetStatus(t.Context(), path)
	if err != nil || !st.FrameOpen || st.LastFrameEndedAt == nil || !st.LastFrameEndedAt.Equal(ended) || st.LastKeyAt == nil || !st.LastKeyAt.Equal(key) {
		t.Fatalf("status = %+v, %v", st, err)
	}
	err = Call(t.Context(), path, OpRenew, nil, nil)
	r, ok := errors.AsType[*Refusal](err)
	if !ok || r.Code != CodeNotBetweenTurns || r.Message != "a turn is under way; nothing was done" {
		t.Fatalf("renew: %v (%T), want the refusal with its code", err, err)
	}
}

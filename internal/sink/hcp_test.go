package sink

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/ledger"
)

func testReceipt(ev contract.Event, sum map[string]any) contract.LifecycleReceipt {
	return contract.LifecycleReceipt{
		ClientID: "lifeloop", AdapterID: "generic", InvocationID: "inv_1", Event: ev, EventID: "evt_" + string(ev),
		IntegrationMode: contract.ModeLauncherWrapper, Status: contract.StatusObserved, AtEpochS: 1778100000, TelemetrySummary: sum,
	}
}

// TestHCPFormatContinuesTheLedger: an hcp sink opened on a session whose
// ledger already holds receipts (a continued session) numbers its events
// as a replay of the whole ledger does.
func TestHCPFormatContinuesTheLedger(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "receipts.jsonl")
	led, err := ledger.Open(lp, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	for _, ev := range []contract.Event{contract.EventSessionStarting, contract.EventSessionStarted} {
		if _, _, err := led.Append(testReceipt(ev, nil)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "hcp.ndjson")
	s, err := Open(out, FormatHCP, Options{SessionID: "ses_X", LedgerPath: lp})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []contract.LifecycleReceipt{
		testReceipt(contract.EventFrameOpened, map[string]any{"frame_id": "t1"}),
		testReceipt(contract.EventSupervisorTick, map[string]any{"state": "running"}),
		testReceipt(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0"}),
	} {
		rec, _, err := led.Append(r)
		if err != nil {
			t.Fatal(err)
		}
		s.Write(rec)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var got []string
	for _, l := range lines {
		e, err := hcp.Decode([]byte(l))
		if err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got = append(got, fmt.Sprintf("%s:%d", e.Payload.EventType, e.Payload.Sequence))
	}
	want := []string{"progress:3", "state_changed:4", "session_closed:5"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", got, want)
	}
}

// TestHCPUnreadableLedgerIsLogged: a ledger the hcp format cannot read
// (here a folder) is not silently taken as empty.
func TestHCPUnreadableLedgerIsLogged(t *testing.T) {
	var logBuf strings.Builder
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	p := primeHCP(Options{SessionID: "ses_X", LedgerPath: t.TempDir()}, log)
	if p == nil {
		t.Fatal("primeHCP returned nil")
	}
	if !strings.Contains(logBuf.String(), "cannot read the session's ledger") {
		t.Fatalf("no warning logged: %q", logBuf.String())
	}
}

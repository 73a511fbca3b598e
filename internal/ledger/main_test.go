package ledger

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lifeloop/lifeloop/contract"
)

// The test binary doubles as a helper process: when LEDGER_HELPER is set,
// TestMain runs that helper instead of the tests (the os/exec
// helper-process pattern), so multi-process tests need no other program.
const helperEnv = "LEDGER_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		code := m.Run()
		if bigLedgerPath != "" {
			_ = os.RemoveAll(filepath.Dir(bigLedgerPath))
		}
		if code == 0 {
			if err := goleak.Find(); err != nil {
				fmt.Fprintln(os.Stderr, "goleak:", err)
				code = 1
			}
		}
		os.Exit(code)
	case "append":
		os.Exit(helperAppend())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperAppend appends LEDGER_COUNT receipts (0: forever) to LEDGER_PATH
// and prints each acknowledged sequence on stdout, one per line, only after
// Append has returned (so after the fsync). With LEDGER_TORN=N it stops
// after N (at least 1) receipts, writes the first part of one more line as a writer
// killed mid-write leaves it, closes stdout and waits to be killed.
func helperAppend() int {
	path := os.Getenv("LEDGER_PATH")
	count, _ := strconv.Atoi(os.Getenv("LEDGER_COUNT"))
	tag := os.Getenv("LEDGER_TAG")
	if torn, err := strconv.Atoi(os.Getenv("LEDGER_TORN")); err == nil {
		count = torn
		defer tornTail(path, tag)
	}
	l, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	out := bufio.NewWriter(os.Stdout)
	for i := 0; count == 0 || i < count; i++ {
		r := testReceipt(contract.EventSupervisorTick)
		r.TelemetrySummary = map[string]any{"writer": tag, "i": i, "pad": "0123456789abcdef0123456789abcdef0123456789abcdef"}
		got, _, err := l.Append(r)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(out, "%d %s\n", *got.Sequence, got.ReceiptID)
		if err := out.Flush(); err != nil {
			return 1
		}
	}
	return 0
}

// tornTail appends the first part of a receipt line to path, closes
// stdout and blocks until the process is killed.
func tornTail(path, tag string) {
	r := testReceipt(contract.EventSupervisorTick)
	r.TelemetrySummary = map[string]any{"writer": tag, "torn": true}
	line, err := json.Marshal(r)
	if err == nil {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			_, _ = f.Write(line[:len(line)/2])
			_ = f.Close()
		}
	}
	_ = os.Stdout.Close()
	select {}
}

func testReceipt(ev contract.Event) contract.LifecycleReceipt {
	return contract.LifecycleReceipt{
		ClientID:        "test-client",
		AdapterID:       "codex",
		InvocationID:    "inv_test",
		Event:           ev,
		EventID:         "evt_test",
		IntegrationMode: contract.ModeLauncherWrapper,
		Status:          contract.StatusObserved,
	}
}

var fixedNow = func() time.Time { return time.Unix(1778100000, 0) }

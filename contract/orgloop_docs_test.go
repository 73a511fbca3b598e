package contract

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// orgLoopDocReceipts are the receipts behind the examples of
// docs/orgloop.md: a Claude Code session that started and exited 0.
func orgLoopDocReceipts() (started, ended LifecycleReceipt) {
	start := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	end := start.Add(754*time.Second + 500*time.Millisecond)
	f := ExitFacts{Code: 0, FromWaitStatus: true}
	started = LifecycleReceipt{
		SchemaVersion: ReceiptSchemaVersion, ReceiptID: "lfr_01KAQ3M4TB8XW2V9R0C7D5E6F1", ClientID: "lifeloop", AdapterID: "claude",
		InvocationID: "inv_01KAQ3M4TA0000000000000000", Event: EventSessionStarted, EventID: "evt_01KAQ3M4TB0000000000000000",
		Sequence: Ptr(uint64(2)), IntegrationMode: ModeLauncherWrapper, Status: StatusObserved, AtEpochS: start.Unix(),
	}
	ended = started
	ended.ReceiptID, ended.Event, ended.Sequence, ended.AtEpochS = "lfr_01KAQ49Q2N7Y3Z5K8M1P4R6T9V", EventSessionEnded, Ptr(uint64(41)), end.Unix()
	ended.TelemetrySummary = ledgerJSON(SessionEndedSummary(ClassifyExit(f), f, start, end, "/home/dev/my-project"))
	return started, ended
}

var orgLoopDocExample = regexp.MustCompile("(?s)<!-- example: (\\S+) -->\n```json\n(.*?)\n```")

// TestOrgLoopDocExamples: every JSON block of docs/orgloop.md is one of
// the files below, each what lifeloop produces today for the receipts
// above (rewrite them with -update).
func TestOrgLoopDocExamples(t *testing.T) {
	started, ended := orgLoopDocReceipts()
	o := OrgLoopOptions{SessionID: "ses_01KAQ3M4T9J6H2C8D4F0G1K3M5", Source: "lifeloop-sessions", Harness: HarnessClaudeCode, Cwd: "/home/dev/my-project"}
	evStarted, err1 := ProjectOrgLoop(started, o)
	evEnded, err2 := ProjectOrgLoop(ended, o)
	postStop, err3 := OrgLoopWebhookPost(ended, o)
	postPolicyStart, err4 := OrgLoopWebhookPost(policyRenewalStarted(started), o)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	files := map[string]any{
		"contract/testdata/orgloop/event_started.json":                evStarted,
		"contract/testdata/orgloop/event_completed.json":              evEnded,
		"contract/testdata/orgloop/webhook_stop.json":                 postStop,
		"contract/testdata/orgloop/webhook_policy_renewal_start.json": postPolicyStart,
	}
	for path, v := range files {
		b, _ := json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
		full := filepath.Join("..", path)
		if *update {
			if err := os.WriteFile(full, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(b) {
			t.Errorf("%s is not what lifeloop produces; run go test ./contract -run OrgLoopDoc -update", path)
		}
		if strings.Contains(path, "event_") {
			if err := CheckOrgLoopJSON(got); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
	}
	doc, err := os.ReadFile("../docs/orgloop.md")
	if err != nil {
		t.Fatal(err)
	}
	matches := orgLoopDocExample.FindAllSubmatch(doc, -1)
	if n := strings.Count(string(doc), "```json"); n != len(matches) || n == 0 {
		t.Fatalf("%d json blocks but %d are marked as example files", n, len(matches))
	}
	for _, m := range matches {
		if _, ok := files[string(m[1])]; !ok {
			t.Errorf("docs/orgloop.md names %s, which this test does not produce", m[1])
			continue
		}
		file, _ := os.ReadFile(filepath.Join("..", string(m[1])))
		if strings.TrimRight(string(file), "\n") != string(m[2]) {
			t.Errorf("docs/orgloop.md block differs from %s", m[1])
		}
	}
}

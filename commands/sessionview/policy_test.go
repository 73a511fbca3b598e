package sessionview

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/renewal"
)

// policyEvidence is the "policy" object the wrapper records on each
// receipt of a renewal a policy client asked for.
func policyEvidence() map[string]any {
	return renewal.Policy{
		Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71.3, TriggerTokens: 71300,
		Window: 100000, NoteDigest: "sha256:ab12", NoteBytes: 1234, NoteSource: "builtin", ThisHour: 2, PerHour: 3,
	}.Map()
}

// renewalSteps appends the four receipts of renewal attempt n, with
// policy evidence when ev is not nil, from sequence seq on.
func renewalSteps(t *testing.T, path string, seq, n int, ev map[string]any) int {
	t.Helper()
	at := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	for _, step := range []struct{ event, name string }{
		{"session.ending", "ending"}, {"session.ended", "ended"}, {"session.starting", "starting"}, {"session.started", "started"},
	} {
		sum := map[string]any{"reason": "renewal", "renewal_attempt": n, "renewal_step": step.name, "resume": false}
		if ev != nil {
			sum["policy"] = ev
		}
		testutil.AppendReceipt(t, path, "codex", seq, step.event, at, sum)
		seq++
	}
	return seq
}

func policyReport(reason, detail string) map[string]any {
	m := policyEvidence()
	m["decision"], m["reason"], m["detail"] = "gave_up", reason, detail
	return map[string]any{"policy": m}
}

func writeAutorenew(t *testing.T, dir string, st autorenew.State) {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, autorenew.StateFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPolicyEvidence: the latest renewal shows as the policy's, with the
// evidence its receipts carry; a report after it is the latest word; a
// person's renewal after it is no longer the policy's; the attached
// client's state file is shown while its process lives.
func TestPolicyEvidence(t *testing.T) {
	root, rec := writeSession(t, "turns.jsonl", nil)
	path := statedir.ReceiptsPath(root, rec.ID)
	seq := renewalSteps(t, path, 10, 1, policyEvidence())
	writeAutorenew(t, statedir.SessionDir(root, rec.ID), autorenew.State{
		Schema: "lifeloop.autorenew.v1", Client: renewal.PolicyClientID, PID: os.Getpid(), Threshold: "70%", PerHour: 3, ThisHour: 2,
	})

	s, err := Load(root, rec)
	if err != nil {
		t.Fatal(err)
	}
	p := s.PolicyShown()
	if p == nil || p.Renewal == nil {
		t.Fatalf("policy shown %+v: want the policy's renewal", p)
	}
	want := renewal.Policy{Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71.3, TriggerTokens: 71300,
		Window: 100000, NoteDigest: "sha256:ab12", NoteBytes: 1234, NoteSource: "builtin", ThisHour: 2, PerHour: 3}
	if *p.Renewal != want || p.RenewalAttempt != 1 || p.RenewedAt == nil {
		t.Errorf("renewal evidence %+v attempt %d at %v, want %+v attempt 1", *p.Renewal, p.RenewalAttempt, p.RenewedAt, want)
	}
	if p.Client == nil || p.Client.Threshold != "70%" || p.ReportIsLatest() {
		t.Errorf("client %+v, report latest %v: want the attached client at 70%%, no report", p.Client, p.ReportIsLatest())
	}

	// The policy gives up: its report is the latest word.
	testutil.AppendReceipt(t, path, "codex", seq, "capability.degraded", time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC),
		policyReport("futile", "the new conversation started at 66 %, within 10 points of 70 %"))
	seq++
	s, _ = Load(root, rec)
	p = s.PolicyShown()
	if !p.ReportIsLatest() || !p.Report.GaveUp() || p.Report.Reason != "futile" || p.Report.Detail == "" || p.Renewal == nil {
		t.Errorf("after the report: %+v report %+v", p, p.Report)
	}

	// renewal.json names a later attempt (a renewal the policy's receipts
	// do not tell, e.g. one refused before anything was recorded).
	if err := renewal.WriteStatus(renewal.StatusPath(statedir.SessionDir(root, rec.ID)), renewal.Status{State: renewal.StateFailed, Attempt: 2}); err != nil {
		t.Fatal(err)
	}
	s, _ = Load(root, rec)
	if p := s.PolicyShown(); p == nil || p.Renewal != nil || p.Report == nil {
		t.Errorf("renewal.json at attempt 2: policy shown %+v, want the report only", p)
	}

	// A person's renewal (no policy evidence) follows the policy's.
	renewalSteps(t, path, seq, 3, nil)
	if err := renewal.WriteStatus(renewal.StatusPath(statedir.SessionDir(root, rec.ID)), renewal.Status{State: renewal.StateDelivered, Attempt: 3}); err != nil {
		t.Fatal(err)
	}
	s, _ = Load(root, rec)
	if s.Policy == nil || s.Policy.Renewal != nil {
		t.Errorf("after a person's renewal the latest is not the policy's: %+v", s.Policy)
	}

	// The client's process is gone: no client shown.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	writeAutorenew(t, statedir.SessionDir(root, rec.ID), autorenew.State{Client: renewal.PolicyClientID, PID: cmd.Process.Pid, Threshold: "70%"})
	s, _ = Load(root, rec)
	if p := s.PolicyShown(); p == nil || p.Client != nil {
		t.Errorf("a dead client is shown: %+v", p)
	}
}

// TestNoPolicy: a session no policy client touched shows none, and a
// state file that is not JSON is an error of Load, not a panic.
func TestNoPolicy(t *testing.T) {
	root, rec := writeSession(t, "turns.jsonl", nil)
	s, err := Load(root, rec)
	if err != nil || s.Policy != nil || s.PolicyShown() != nil {
		t.Fatalf("err %v policy %+v", err, s.Policy)
	}
	if err := os.WriteFile(filepath.Join(statedir.SessionDir(root, rec.ID), autorenew.StateFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(root, rec); err == nil {
		t.Error("a broken autorenew.json gave no error")
	}
}

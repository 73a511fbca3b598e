package topview

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// evidence is the "policy" object the wrapper records on each receipt of
// a renewal a policy client asked for.
var evidence = renewal.Policy{
	Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71.3, TriggerTokens: 71300, Window: 100000,
	NoteDigest: "sha256:ab12", NoteBytes: 1234, NoteSource: "builtin", ThisHour: 2, PerHour: 3,
}

// TestPolicyShowsInTheRow follows a session while a policy client
// attaches (autorenew.json), renews it (the renewal's four receipts carry
// the evidence) and then gives up (a capability.degraded report): the
// renewal column and --json say each, as it happens.
func TestPolicyShowsInTheRow(t *testing.T) {
	root := t.TempDir()
	const id = "ses_01TESTTOP00000000000000P1"
	started := fixedNow
	if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "claude", Cwd: "/work/a", StartedAt: &started}); err != nil {
		t.Fatal(err)
	}
	appendReceipt(t, root, id, 1, "session.started", nil)
	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() { done <- src.Watch(ctx, 10*time.Millisecond, func() { changed <- struct{}{} }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-changed

	// The client attaches: its state file names the threshold.
	st, err := json.Marshal(autorenew.State{Schema: "lifeloop.autorenew.v1", Client: renewal.PolicyClientID, PID: os.Getpid(), Threshold: "70%", PerHour: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(statedir.SessionDir(root, id), autorenew.StateFile), st, 0o600); err != nil {
		t.Fatal(err)
	}
	r := waitRow(t, src, changed, id, "the attached client", func(r Row) bool { return r.Policy != nil && r.Policy.Client != nil })
	if got := RenewalText(r); got != "autorenew 70%" {
		t.Errorf("renewal column with a client attached: %q, want %q", got, "autorenew 70%")
	}

	// The policy renews.
	for i, step := range []string{"ending", "ended", "starting", "started"} {
		sum := map[string]any{"reason": "renewal", "renewal_attempt": 1, "renewal_step": step, "policy": evidence.Map()}
		appendReceipt(t, root, id, 2+i, "session."+step, sum)
	}
	if err := renewal.WriteStatus(renewal.StatusPath(statedir.SessionDir(root, id)), renewal.Status{State: renewal.StateDelivered, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	r = waitRow(t, src, changed, id, "the policy's renewal", func(r Row) bool {
		return r.Sequence == 5 && r.Renewal == "delivered" && r.Policy != nil && r.Policy.Renewal != nil
	})
	if got := RenewalText(r); got != "policy 71% · 2/3 h" {
		t.Errorf("renewal column after the policy's renewal: %q", got)
	}
	if *r.Policy.Renewal != evidence || r.Policy.RenewalAttempt != 1 {
		t.Errorf("evidence %+v attempt %d, want %+v", *r.Policy.Renewal, r.Policy.RenewalAttempt, evidence)
	}

	// The policy gives up on the next crossing.
	report := evidence.Map()
	report["decision"], report["reason"], report["detail"] = "gave_up", "futile", "the new conversation started at 66 %, within 10 points of 70 %"
	appendReceipt(t, root, id, 6, "capability.degraded", map[string]any{"policy": report})
	r = waitRow(t, src, changed, id, "the report", func(r Row) bool { return r.Sequence == 6 })
	if got := RenewalText(r); got != "gave up: futile" {
		t.Errorf("renewal column after the report: %q", got)
	}

	// --json: the row's policy object.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var row struct {
		Policy struct {
			Renewal struct {
				Client         string  `json:"client"`
				TriggerPercent float64 `json:"trigger_percent"`
				PerHour        int     `json:"per_hour"`
			} `json:"renewal"`
			Report struct{ Decision, Reason, Detail string } `json:"report"`
			Client struct{ Threshold string }                `json:"client"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(b, &row); err != nil {
		t.Fatal(err)
	}
	p := row.Policy
	if p.Renewal.Client != renewal.PolicyClientID || p.Renewal.TriggerPercent != 71.3 || p.Renewal.PerHour != 3 ||
		p.Report.Decision != "gave_up" || p.Report.Reason != "futile" || p.Report.Detail == "" || p.Client.Threshold != "70%" {
		t.Errorf("--json policy: %s", b)
	}
}

// TestRenewalTextFitsItsColumn: each policy text fits the wide layout's
// renewal column, and a policy renewal that did not deliver says so.
func TestRenewalTextFitsItsColumn(t *testing.T) {
	var width int
	for _, c := range columns(wideAt) {
		if c.title == "RENEWAL" {
			width = c.width
		}
	}
	tokens := evidence
	tokens.ThresholdPercent, tokens.TriggerPercent, tokens.ThresholdTokens, tokens.TriggerTokens = 0, 0, 150000, 152300
	for _, c := range []struct {
		row  Row
		want string
	}{
		{Row{Renewal: "delivered", Policy: policyOf(&evidence, "")}, "policy 71% · 2/3 h"},
		{Row{Renewal: "delivered", Policy: policyOf(&tokens, "")}, "policy 152k 2/3 h"},
		{Row{Renewal: "undelivered", Policy: policyOf(&evidence, "")}, "policy undelivered"},
		{Row{Policy: policyOf(nil, "session_limit")}, "gave up: hour cap"},
		{Row{Policy: policyOf(nil, "machine_limit")}, "gave up: busy"},
		{Row{Policy: policyOf(nil, "no_safe_moment")}, "gave up: no pause"},
		{Row{Policy: policyOf(nil, "refused")}, "gave up: refused"},
		{Row{Renewal: "failed"}, "failed"},
		{Row{}, "-"},
	} {
		got := RenewalText(c.row)
		if got != c.want {
			t.Errorf("RenewalText = %q, want %q", got, c.want)
		}
		if Width(got) > width {
			t.Errorf("%q is wider than the renewal column (%d)", got, width)
		}
	}
	// The 80-column layout has no renewal column; its lines stay 80 wide.
	rows := []Row{{ID: "ses_01TESTTOP00000000000000P2", State: "running", Renewal: "delivered", Policy: policyOf(&evidence, "futile")}}
	for _, l := range Table(rows, fixedNow, 80, -1, Plain) {
		if Width(l) != 80 || strings.Contains(l, "policy") {
			t.Errorf("80 columns: %q (%d cells)", l, Width(l))
		}
	}
}

// policyOf is a row's policy with the evidence ev of its latest renewal
// and a report of reason, each when given.
func policyOf(ev *renewal.Policy, reason string) *sessionview.Policy {
	p := &sessionview.Policy{Renewal: ev}
	if reason != "" {
		p.Report = &sessionview.PolicyReport{Decision: "gave_up", Reason: reason, Detail: "why"}
	}
	return p
}

// TestPolicyLine: the live view's line for each thing a policy did.
func TestPolicyLine(t *testing.T) {
	const id = "ses_01TESTTOP0000000000000POL3"
	tokens := evidence
	tokens.ThresholdPercent, tokens.TriggerPercent, tokens.ThresholdTokens, tokens.TriggerTokens = 0, 0, 150000, 152300
	fallback := policyOf(nil, "handoff_failed")
	fallback.Report.Decision, fallback.Report.Detail = "fallback", "the handoff command exited 1; the built-in note was used"
	waiting := &sessionview.Policy{Client: &autorenew.State{Threshold: "70%", PerHour: 3, ThisHour: 1, Waiting: "pressure 71 % ≥ 70 %: waiting for the turn to end"}}
	for _, c := range []struct {
		p    *sessionview.Policy
		want string
	}{
		{policyOf(&evidence, ""), "ses_0000POL3: renewed by policy at 71 % (threshold 70 %), 2 of 3 this hour"},
		{policyOf(&tokens, ""), "ses_0000POL3: renewed by policy at 152k tokens (threshold 150k), 2 of 3 this hour"},
		{policyOf(nil, "futile"), "ses_0000POL3: policy gave up: why"},
		{fallback, "ses_0000POL3: policy fell back: the handoff command exited 1; the built-in note was used"},
		{waiting, "ses_0000POL3: autorenew at 70%, 1 of 3 this hour: pressure 71 % ≥ 70 %: waiting for the turn to end"},
		{nil, ""},
	} {
		if got := PolicyLine(Row{ID: id, Policy: c.p}); got != c.want {
			t.Errorf("PolicyLine = %q, want %q", got, c.want)
		}
	}
}

package sessionview

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/renewal"
)

// A renewal policy client (`lifeloop autorenew`) leaves its evidence in
// three places, and the summary folds all three: the "policy" object in
// the telemetry_summary of each receipt of a renewal it asked for; its
// reports, capability.degraded receipts (capability "renewal.policy")
// whose telemetry_summary "policy" has a "decision"; and its own state
// file, autorenew.json, in the session folder.

// PolicyCapability is the capability a policy client's reports degrade.
const PolicyCapability = "renewal.policy"

// Policy is what a renewal policy client did and does for a session.
type Policy struct {
	// Renewal is the evidence of the session's latest policy renewal
	// (what its receipts carry under "policy"); RenewalAttempt its
	// renewal_attempt and RenewedAt when its first receipt was recorded.
	Renewal        *renewal.Policy `json:"renewal,omitempty"`
	RenewalAttempt int             `json:"renewal_attempt,omitempty"`
	RenewedAt      *time.Time      `json:"renewed_at,omitempty"`
	// Report is the policy's latest report (it gave up, or fell back to
	// the built-in note), nil before the first.
	Report *PolicyReport `json:"report,omitempty"`
	// Client is the state file of the policy client attached to the
	// session, nil when none is (see Summary.PolicyShown).
	Client *autorenew.State `json:"client,omitempty"`

	renewalSeq, reportSeq uint64
}

// PolicyReport is one report of a policy client.
type PolicyReport struct {
	// Decision is "gave_up" or "fallback"; Reason one of autorenew's
	// reasons ("futile", "session_limit", …); Detail a line for a person.
	Decision string    `json:"decision"`
	Reason   string    `json:"reason"`
	Detail   string    `json:"detail,omitempty"`
	At       time.Time `json:"at"`
}

// GaveUp reports whether the report says the policy gave up (a fallback
// is not giving up: the renewal went on with the built-in note).
func (r *PolicyReport) GaveUp() bool { return r != nil && r.Decision == "gave_up" }

// policyMap returns a receipt's telemetry_summary "policy" object.
func policyMap(sum map[string]any) (map[string]any, bool) {
	m, ok := sum["policy"].(map[string]any)
	return m, ok && len(m) > 0
}

// applyPolicy folds the policy evidence of one receipt.
func (s *Summary) applyPolicy(r contract.LifecycleReceipt, at time.Time) {
	sum := r.TelemetrySummary
	pm, hasPolicy := policyMap(sum)
	switch {
	case r.Event == contract.EventCapabilityDegraded && hasPolicy && pm["decision"] != nil:
		rep := &PolicyReport{At: at}
		rep.Decision, _ = pm["decision"].(string)
		rep.Reason, _ = pm["reason"].(string)
		rep.Detail, _ = pm["detail"].(string)
		s.policy().Report, s.policy().reportSeq = rep, uint64(s.Receipts)
	case r.Event.IsSession() && sum[contract.SummaryReason] == "renewal":
		attempt := 0
		if v, ok := Number(sum["renewal_attempt"]); ok {
			attempt = int(v)
		}
		if !hasPolicy {
			// A renewal a person asked for, after the policy's: the
			// latest renewal is no longer the policy's.
			if s.Policy != nil && s.Policy.Renewal != nil && attempt > s.Policy.RenewalAttempt {
				s.Policy.Renewal, s.Policy.RenewalAttempt, s.Policy.RenewedAt = nil, 0, nil
			}
			return
		}
		p := s.policy()
		if p.Renewal != nil && attempt == p.RenewalAttempt {
			return // a later step of the same renewal: the same evidence
		}
		ev, err := decodePolicy(pm)
		if err != nil {
			return
		}
		p.Renewal, p.RenewalAttempt, p.RenewedAt, p.renewalSeq = &ev, attempt, &at, uint64(s.Receipts)
	}
}

func (s *Summary) policy() *Policy {
	if s.Policy == nil {
		s.Policy = &Policy{}
	}
	return s.Policy
}

// decodePolicy reads a receipt's "policy" object as renewal.Policy.
func decodePolicy(m map[string]any) (renewal.Policy, error) {
	var p renewal.Policy
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	return p, err
}

// SetAutorenew records the policy client's state file (nil: none).
func (s *Summary) SetAutorenew(st *autorenew.State) {
	if st == nil {
		if s.Policy != nil {
			s.Policy.Client = nil
		}
		return
	}
	s.policy().Client = st
}

// ReadAutorenew reads the policy client's state file of a session folder;
// a folder without one is (nil, nil).
func ReadAutorenew(sessionDir string) (*autorenew.State, error) {
	st, err := autorenew.ReadState(autorenew.StatePath(sessionDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s of session %s is not a policy client's state (%w); its client rewrites it, or delete it", autorenew.StateFile, filepath.Base(sessionDir), err)
	}
	return &st, nil
}

// PolicyShown is the policy as a view shows it at this moment, or nil
// when there is nothing to show: Renewal only while the session's latest
// renewal is the policy's (renewal.json names no later attempt), Client
// only while the session runs and the client's process lives.
func (s *Summary) PolicyShown() *Policy {
	if s.Policy == nil {
		return nil
	}
	p := *s.Policy
	if p.Renewal != nil && s.Renewal != nil && s.Renewal.Attempt > p.RenewalAttempt {
		p.Renewal, p.RenewalAttempt, p.RenewedAt = nil, 0, nil
	}
	if p.Client != nil && (s.Terminal || !processLives(p.Client.PID)) {
		p.Client = nil
	}
	if p.Renewal == nil && p.Report == nil && p.Client == nil {
		return nil
	}
	return &p
}

// ReportIsLatest reports whether the policy's report came after its
// latest renewal (so it says what the policy does now).
func (p *Policy) ReportIsLatest() bool {
	return p != nil && p.Report != nil && (p.Renewal == nil || p.reportSeq > p.renewalSeq)
}

// processLives reports whether process pid exists.
func processLives(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

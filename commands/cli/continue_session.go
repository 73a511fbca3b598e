package cli

import (
	"fmt"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/seal"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// prepareContinuation readies session id for `run --continue-session`:
// a session whose wrapper died is sealed first (its lost harness session
// gets its end before the continuation opens one), and a renewal whose
// stop the ledger holds — recorded by the lost wrapper just before it
// could say so in renewal.json, or by the seal for a wrapper lost while
// the renewal stopped its harness — goes on from its relaunch instead of
// stopping the harness a second time (an end after the end). An unknown
// session is left for the launcher to refuse.
func (e *env) prepareContinuation(root, id string) error {
	rec, err := statedir.ReadSession(root, id)
	if err != nil {
		return nil
	}
	if _, err := seal.Check(root, rec, e.sealOptions()); err != nil {
		return fmt.Errorf("--continue-session: %w", err)
	}
	var prior []contract.LifecycleReceipt
	for en, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
		if err == nil {
			prior = append(prior, en.Receipt)
		}
	}
	return advanceStoppedRenewal(statedir.SessionDir(root, id), prior)
}

// advanceStoppedRenewal moves a renewal still "stopping" in the session
// folder dir's renewal.json to "relaunching" when prior, the session's
// receipts, already record that renewal's stop (seal.RenewalStopped).
func advanceStoppedRenewal(dir string, prior []contract.LifecycleReceipt) error {
	attempt, ended := seal.RenewalStopped(prior)
	if attempt == 0 {
		return nil
	}
	path := renewal.StatusPath(dir)
	st, err := renewal.ReadStatus(path)
	if err != nil || st.State != renewal.StateStopping || st.Attempt != attempt {
		return nil // nothing to advance; Recover judges the status as it is
	}
	st.State, st.EndedReceiptID = renewal.StateRelaunching, ended
	if err := renewal.WriteStatus(path, st); err != nil {
		return fmt.Errorf("--continue-session: recording that renewal %d stopped its harness: %w", attempt, err)
	}
	return nil
}

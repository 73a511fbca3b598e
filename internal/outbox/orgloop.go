package outbox

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/sink"
)

// OrgLoopWebhook is the Config of a delivery to OrgLoop's coding-agent
// webhook source: a start post for each session.started, a stop post for
// each terminal receipt (contract.OrgLoopWebhookPost), signed with
// w.Secret when set. harnessOf maps a receipt's adapter id to OrgLoop's
// harness vocabulary.
//
// A stop post whose receipt records no duration (the stop of a renewal
// or of a switch to a new harness session) carries how long the harness
// incarnation it ends ran: from that incarnation's session.started to
// the stop, in whole seconds as receipts record them. The outbox replays
// the ledger from its first entry, so this holds after a restart too. A
// start post's duration is 0: nothing has run yet.
func OrgLoopWebhook(ledgerPath, statePath string, w *sink.Webhook, base contract.OrgLoopOptions, harnessOf func(adapterID string) string) Config {
	var inc incarnation
	return Config{
		LedgerPath: ledgerPath,
		StatePath:  statePath,
		Target:     sink.RedactURL(w.URL),
		Expand: func(e ledger.Entry, replay bool) ([]Message, error) {
			r := e.Receipt
			ran, known := inc.see(r)
			if replay {
				return nil, nil
			}
			o := base
			o.Harness = harnessOf(r.AdapterID)
			post, err := contract.OrgLoopWebhookPost(r, o)
			if err != nil {
				return nil, err
			}
			if _, recorded := r.TelemetrySummary[contract.SummaryDurationS].(float64); post.HookType == contract.OrgLoopHookStop && !recorded && known {
				post.DurationSeconds = ran
			}
			id, _ := post.Meta["event_id"].(string)
			b, err := json.Marshal(post)
			return []Message{{Body: b, ID: id}}, err
		},
		Post: w.Post,
		Permanent: func(err error) bool {
			var re *sink.RejectedError
			return errors.As(err, &re)
		},
	}
}

// incarnation follows, receipt by receipt in ledger order, when the
// harness incarnation under way started: each session.started that is
// not failed begins one, each session.ended ends it.
type incarnation struct {
	started int64 // unix seconds
	running bool
}

// see takes the next receipt; for a session.ended that ends a started
// incarnation it returns how many seconds that incarnation ran.
func (in *incarnation) see(r contract.LifecycleReceipt) (seconds float64, ok bool) {
	switch {
	case r.Event == contract.EventSessionStarted && r.Status != contract.StatusFailed:
		in.started, in.running = r.AtEpochS, true
		if s, _ := r.TelemetrySummary[contract.SummaryStartedAt].(string); s != "" {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				in.started = t.Unix()
			}
		}
	case r.Event == contract.EventSessionEnded && in.running:
		in.running = false
		return float64(max(r.AtEpochS-in.started, 0)), true
	}
	return 0, false
}

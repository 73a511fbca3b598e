package outbox

import (
	"encoding/json"
	"errors"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/sink"
)

// OrgLoopWebhook is the Config of a delivery to OrgLoop's coding-agent
// webhook source: a start post for each session.started, a stop post for
// each terminal receipt (contract.OrgLoopWebhookPost), signed with
// w.Secret when set. harnessOf maps a receipt's adapter id to OrgLoop's
// harness vocabulary.
func OrgLoopWebhook(ledgerPath, statePath string, w *sink.Webhook, base contract.OrgLoopOptions, harnessOf func(adapterID string) string) Config {
	return Config{
		LedgerPath: ledgerPath,
		StatePath:  statePath,
		Target:     sink.RedactURL(w.URL),
		Build: func(r contract.LifecycleReceipt) ([]byte, string, error) {
			o := base
			o.Harness = harnessOf(r.AdapterID)
			post, err := contract.OrgLoopWebhookPost(r, o)
			if err != nil {
				return nil, "", err
			}
			id, _ := post.Meta["event_id"].(string)
			b, err := json.Marshal(post)
			return b, id, err
		},
		Post: w.Post,
		Permanent: func(err error) bool {
			var re *sink.RejectedError
			return errors.As(err, &re)
		},
	}
}

package top

import (
	"fmt"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
)

// ReceiptLine is one receipt as a person reads it: time (UTC), sequence,
// event, status, source and what matters for that event. It never prints
// a payload body (receipts hold none) or a path.
func ReceiptLine(e ledger.Entry) string {
	r := e.Receipt
	s := r.TelemetrySummary
	source := str(s["source"])
	if source == "" {
		source = string(r.IntegrationMode)
	}
	at := time.Unix(r.AtEpochS, 0).UTC().Format(time.TimeOnly)
	return strings.TrimRight(fmt.Sprintf("%s %5d %-26s %-9s %-16s %s", at, e.Sequence, r.Event, r.Status, source, receiptDetail(r)), " ")
}

func receiptDetail(r contract.LifecycleReceipt) string {
	s := r.TelemetrySummary
	var parts []string
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	switch r.Event {
	case contract.EventContextPressureObserved:
		add("%s %d%% %s/%s", str(s["level"]), num(s["percent"]), Tokens(num(s["tokens"])), Tokens(num(s["window"])))
	case contract.EventContextCompacted:
		add("%s → %s tokens", Tokens(num(s["pre_tokens"])), Tokens(num(s["post_tokens"])))
	case contract.EventSessionEnded:
		if o := str(s["outcome"]); o != "" {
			add("%s (%s)", o, str(s["reason"]))
		}
	case contract.EventSessionEnding:
		if v := str(s["reason"]); v != "" {
			add("reason %s", v)
		}
	case contract.EventSupervisorTick:
		add("%s %s", str(s["state"]), str(s["activity"]))
	case contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded:
		if f := str(s["frame_id"]); f != "" {
			add("frame %s", f)
		}
	}
	for _, p := range r.PayloadReceipts {
		add("payload %s %s via %s", p.PayloadID, p.Status, p.Placement)
	}
	if r.FailureClass != nil {
		add("failure %s", *r.FailureClass)
	}
	return strings.Join(parts, "; ")
}

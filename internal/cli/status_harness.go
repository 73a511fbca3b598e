package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// driftReasons are the telemetry_summary.reason values of the
// capability.degraded receipts that report harness drift.
var driftReasons = map[string]bool{"harness_drift": true, "harness_version_unproven": true}

// harnessFacts are what `lifeloop status` says of the harness beyond the
// session record: the version the last session.started recorded and each
// drift capability.degraded of the ledger (what could not be read, in
// which version).
type harnessFacts struct {
	Version string   `json:"harness_version,omitempty"`
	Drift   []string `json:"drift,omitempty"`
}

// readHarnessFacts reads them from session id's ledger.
func readHarnessFacts(root, id string) harnessFacts {
	var h harnessFacts
	f, err := os.Open(statedir.ReceiptsPath(root, id))
	if err != nil {
		return h
	}
	defer f.Close()
	version, drift := &h.Version, &h.Drift
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r struct {
			Event   contract.Event                   `json:"event"`
			Summary map[string]any                   `json:"telemetry_summary"`
			Degr    []contract.CapabilityDegradation `json:"capability_degradations"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		switch r.Event {
		case contract.EventSessionStarted:
			if v, _ := r.Summary["harness_version"].(string); v != "" {
				*version = v
			}
		case contract.EventCapabilityDegraded:
			if reason, _ := r.Summary["reason"].(string); driftReasons[reason] {
				for _, d := range r.Degr {
					if d.Evidence != nil {
						*drift = append(*drift, fmt.Sprintf("%s %s → %s: %s", d.Capability, d.PreviousSupport, d.CurrentSupport, *d.Evidence))
					}
				}
			}
		}
	}
	return h
}

// print adds the facts to the status block, one line each.
func (h harnessFacts) print(w io.Writer) {
	if h.Version != "" {
		fmt.Fprintf(w, "harness   version %s\n", h.Version)
	}
	for _, d := range h.Drift {
		fmt.Fprintf(w, "drift     %s\n", d)
	}
}

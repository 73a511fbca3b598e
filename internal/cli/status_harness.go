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

// printHarness adds to `lifeloop status` the harness version the last
// session.started recorded and each drift capability.degraded of the
// session's ledger (what could not be read, in which version).
func printHarness(w io.Writer, root, id string) {
	f, err := os.Open(statedir.ReceiptsPath(root, id))
	if err != nil {
		return
	}
	defer f.Close()
	var version string
	var drift []string
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
				version = v
			}
		case contract.EventCapabilityDegraded:
			if reason, _ := r.Summary["reason"].(string); driftReasons[reason] {
				for _, d := range r.Degr {
					if d.Evidence != nil {
						drift = append(drift, fmt.Sprintf("%s %s → %s: %s", d.Capability, d.PreviousSupport, d.CurrentSupport, *d.Evidence))
					}
				}
			}
		}
	}
	if version != "" {
		fmt.Fprintf(w, "harness   version %s\n", version)
	}
	for _, d := range drift {
		fmt.Fprintf(w, "drift     %s\n", d)
	}
}

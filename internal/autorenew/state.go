package autorenew

import "time"

// StateFile is the policy client's file in a session folder: what it
// watches for and what it last decided, for `status` and `top`. It is the
// client's, not the ledger's; the ledger has the receipts.
const StateFile = "autorenew.json"

// State is the content of StateFile.
type State struct {
	Schema    string `json:"schema"` // "lifeloop.autorenew.v1"
	Client    string `json:"client"`
	PID       int    `json:"pid"`
	Threshold string `json:"threshold"` // as given: "70%", "150000"
	Resume    bool   `json:"resume,omitempty"`
	PerHour   int    `json:"per_hour"`
	// ThisHour counts this session's policy renewals in the last hour.
	ThisHour int `json:"renewals_this_hour"`
	// Waiting says what the policy waits for now, for a person
	// ("pressure 71 % ≥ 70 %: waiting for the turn to end"), or "".
	Waiting string `json:"waiting,omitempty"`
	// GaveUp is the last Report's reason and detail ("" while none).
	GaveUp       Reason `json:"gave_up,omitempty"`
	GaveUpDetail string `json:"gave_up_detail,omitempty"`
	// Last is the last renewal the policy asked for and how it ended.
	LastAt      *time.Time `json:"last_at,omitempty"`
	LastPercent float64    `json:"last_percent,omitempty"`
	LastResult  string     `json:"last_result,omitempty"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// StatePath returns the State file of a session folder.
func StatePath(sessionDir string) string { panic("autorenew: not built yet") }

// WriteState writes st atomically (atomicfile, 0600).
func WriteState(path string, st State) error { panic("autorenew: not built yet") }

// ReadState reads a State file; a missing file is fs.ErrNotExist.
func ReadState(path string) (State, error) { panic("autorenew: not built yet") }

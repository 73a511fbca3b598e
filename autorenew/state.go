package autorenew

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lifeloop/lifeloop/atomicfile"
)

// StateFile is the policy client's file in a session folder: what it
// watches for and what it last decided, for `status` and `top`. It is the
// client's, not the ledger's; the ledger has the receipts.
const StateFile = "autorenew.json"

// StateSchema is State.Schema.
const StateSchema = "lifeloop.autorenew.v1"

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
func StatePath(sessionDir string) string { return filepath.Join(sessionDir, StateFile) }

// WriteState writes st atomically (atomicfile, 0600), creating its
// folder (0700) when missing; an empty Schema is StateSchema.
func WriteState(path string, st State) error {
	if st.Schema == "" {
		st.Schema = StateSchema
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), atomicfile.DirPerm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.Replace(path, append(data, '\n'))
}

// ReadState reads a State file; a missing file is fs.ErrNotExist.
func ReadState(path string) (State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return State{}, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return State{}, fmt.Errorf("read %s: %w", path, err)
	}
	if st.Schema != StateSchema {
		return State{}, fmt.Errorf("read %s: schema %q, want %q (written by another lifeloop version)", path, st.Schema, StateSchema)
	}
	return st, nil
}

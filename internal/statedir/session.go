package statedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// File and folder names inside a session folder.
const (
	SessionsFolder   = "sessions"
	SessionFile      = "session.json"
	ReceiptsFile     = "receipts.jsonl"
	ControlSocket    = "control.sock"
	ContinuationDir  = "continuation"
	LogFile          = "lifeloop.log"
	SessionSchemaV1  = "lifeloop.session.v1"
	maxSessionIDSize = 128
)

// SessionsDir returns <root>/sessions.
func SessionsDir(root string) string { return filepath.Join(root, SessionsFolder) }

// SessionDir returns <root>/sessions/<id>. It does not validate id; use
// ValidateSessionID on ids that come from users.
func SessionDir(root, id string) string { return filepath.Join(root, SessionsFolder, id) }

// SessionPath returns the session.json path of session id.
func SessionPath(root, id string) string { return filepath.Join(SessionDir(root, id), SessionFile) }

// ReceiptsPath returns the receipts.jsonl path of session id.
func ReceiptsPath(root, id string) string { return filepath.Join(SessionDir(root, id), ReceiptsFile) }

// ControlSocketPath returns the control.sock path of session id.
func ControlSocketPath(root, id string) string {
	return filepath.Join(SessionDir(root, id), ControlSocket)
}

// ContinuationPath returns the continuation/ folder of session id.
func ContinuationPath(root, id string) string {
	return filepath.Join(SessionDir(root, id), ContinuationDir)
}

// LogPath returns the lifeloop.log path of session id.
func LogPath(root, id string) string { return filepath.Join(SessionDir(root, id), LogFile) }

// ValidateSessionID rejects ids that could escape the sessions folder or
// are not plain names: only ASCII letters, digits, '_' and '-' are allowed.
func ValidateSessionID(id string) error {
	if id == "" {
		return errors.New("empty session id")
	}
	if len(id) > maxSessionIDSize {
		return fmt.Errorf("session id %.20q... is longer than %d characters", id, maxSessionIDSize)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("session id %q may contain only letters, digits, '_' and '-'", id)
		}
	}
	return nil
}

// CreateSessionDir creates the folder of session id (and its continuation/
// folder) with DirPerm, creating root and root/sessions when missing, and
// returns the session folder.
func CreateSessionDir(root, id string) (string, error) {
	if err := ValidateSessionID(id); err != nil {
		return "", err
	}
	if err := Ensure(root); err != nil {
		return "", err
	}
	if err := Ensure(SessionsDir(root)); err != nil {
		return "", err
	}
	// A new id: one mkdir makes the folder, ours and at most 0700 (the
	// continuation/ folder is made by the first payload stored in it).
	dir := SessionDir(root, id)
	if err := os.Mkdir(dir, DirPerm); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create session folder %s: %w", dir, err)
		}
		if err := checkDir(dir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// SessionState is a lifeloop session's lifecycle state (seed 001's state
// machine, in lowercase).
type SessionState string

// Session states.
const (
	StatePending   SessionState = "pending"   // negotiating, harness not started
	StateRunning   SessionState = "running"   // harness running
	StatePaused    SessionState = "paused"    // harness stopped by the operator, resumable
	StateCompleted SessionState = "completed" // harness exited successfully
	StateFailed    SessionState = "failed"    // harness or lifeloop failed
	StateAborting  SessionState = "aborting"  // abort requested, harness being stopped
	StateAborted   SessionState = "aborted"   // abort finished
	StateRejected  SessionState = "rejected"  // a required capability is unsupported
	// StateLost: the wrapper died without recording the session's end;
	// its ledger was sealed by the next command that looked (see package
	// seal).
	StateLost SessionState = "lost"
)

// SessionStates lists every SessionState.
var SessionStates = []SessionState{
	StatePending, StateRunning, StatePaused, StateCompleted,
	StateFailed, StateAborting, StateAborted, StateRejected, StateLost,
}

// IsTerminal reports whether no further transition can leave s.
func (s SessionState) IsTerminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateAborted, StateRejected, StateLost:
		return true
	case StatePending, StateRunning, StatePaused, StateAborting:
		return false
	}
	return false
}

// Valid reports whether s is one of SessionStates.
func (s SessionState) Valid() bool {
	for _, v := range SessionStates {
		if s == v {
			return true
		}
	}
	return false
}

// ExitInfo is how the harness process ended.
type ExitInfo struct {
	// Code is the exit code, or 128+N when the process died of signal N.
	Code int `json:"code"`
	// Signal names the signal that killed the process ("SIGKILL"), or "".
	Signal string `json:"signal,omitempty"`
	// Outcome, Phase and Reason are the classification of the exit
	// (seed 003 vocabulary), e.g. "failure", "ended", "exit_code_1".
	Outcome string `json:"outcome,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// SessionRecord is the content of session.json.
type SessionRecord struct {
	Schema          string       `json:"schema"`
	ID              string       `json:"id"`
	State           SessionState `json:"state"`
	AdapterID       string       `json:"adapter_id"`
	IntegrationMode string       `json:"integration_mode"`
	Argv            []string     `json:"argv"`
	Cwd             string       `json:"cwd"`
	Pid             int          `json:"pid"`
	// PidStartTicks is the harness process's start time (procfs
	// StartTicks: clock ticks after boot on Linux, microseconds since the
	// epoch on macOS): with Pid it tells the harness from a process that
	// reused its pid.
	PidStartTicks uint64 `json:"pid_start_ticks,omitempty"`
	// WrapperPid is the lifeloop process that supervises the session.
	WrapperPid        int        `json:"wrapper_pid,omitempty"`
	HarnessSessionIDs []string   `json:"harness_session_ids"`
	StartedAt         *time.Time `json:"started_at"`
	EndedAt           *time.Time `json:"ended_at"`
	Exit              *ExitInfo  `json:"exit"`
	UpdatedAt         time.Time  `json:"updated_at"`
	// Terminal is where `run` was started, so that a view can say how to
	// reach the session's screen; nil when it had no terminal.
	Terminal *Terminal `json:"terminal,omitempty"`
	// Parent is the session that started this one (a background session
	// a harness started at a session's request); nil when none is known.
	Parent *Parent `json:"parent,omitempty"`
	// Continues is the lifeloop session that recorded this session's
	// harness session before, in a process that ended: a background
	// session the harness resumed in a new process (a renewal's, or a
	// person's resume); "" when none.
	Continues string `json:"continues,omitempty"`
}

// Parent links a session to the one that started it: the harness's
// session id, and the lifeloop session that recorded it when there is
// one.
type Parent struct {
	HarnessSessionID string `json:"harness_session_id"`
	SessionID        string `json:"session_id,omitempty"`
}

// Terminal is the terminal a session's wrapper runs on: its controlling
// terminal and the multiplexer around it, as its environment said at
// start. Empty fields are not known.
type Terminal struct {
	// TTY is the terminal device ("/dev/pts/3").
	TTY string `json:"tty,omitempty"`
	// TmuxPane is the tmux pane ($TMUX_PANE, "%3") and TmuxSocket the
	// server's socket (the first field of $TMUX).
	TmuxPane   string `json:"tmux_pane,omitempty"`
	TmuxSocket string `json:"tmux_socket,omitempty"`
	// Screen is the GNU screen session ($STY, "12345.pts-0.host").
	Screen string `json:"screen,omitempty"`
}

// WriteSession atomically writes rec to <root>/sessions/<rec.ID>/session.json,
// creating the session folder when missing. Schema defaults to
// SessionSchemaV1; nil slices are written as [].
func WriteSession(root string, rec SessionRecord) error {
	if rec.Schema == "" {
		rec.Schema = SessionSchemaV1
	}
	if rec.Schema != SessionSchemaV1 {
		return fmt.Errorf("session %s: cannot write schema %q (this lifeloop writes %s)", rec.ID, rec.Schema, SessionSchemaV1)
	}
	if !rec.State.Valid() {
		return fmt.Errorf("session %s: invalid state %q", rec.ID, rec.State)
	}
	if rec.Argv == nil {
		rec.Argv = []string{}
	}
	if rec.HarnessSessionIDs == nil {
		rec.HarnessSessionIDs = []string{}
	}
	if err := ValidateSessionID(rec.ID); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("session %s: %w", rec.ID, err)
	}
	data = append(data, '\n')
	// The ledger is the session's durable truth; session.json is its
	// summary, replaced atomically but not synced (package seal rebuilds
	// it from the ledger when a crash or power loss left it stale). The
	// folder exists and was checked when the session was created: a write
	// per state change does not create and check it again (a dozen system
	// calls each time), unless it is missing.
	err = ReplaceFile(SessionPath(root, rec.ID), data)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := CreateSessionDir(root, rec.ID); err != nil {
			return err
		}
		err = ReplaceFile(SessionPath(root, rec.ID), data)
	}
	return err
}

// ErrSessionNotFound is wrapped by errors about a session that does not
// exist.
var ErrSessionNotFound = errors.New("session not found")

// ErrNotARecord is wrapped by errors about a session.json that is not a
// session record at all (empty, torn, not JSON); never about whole JSON
// with fields or values this lifeloop does not know.
var ErrNotARecord = errors.New("not a session record")

// ReadSession reads the session.json of session id. A missing session
// yields an error wrapping ErrSessionNotFound.
func ReadSession(root, id string) (SessionRecord, error) {
	if err := ValidateSessionID(id); err != nil {
		return SessionRecord{}, err
	}
	return ReadSessionFile(SessionPath(root, id))
}

// ReadSessionFile reads and validates one session.json. Unknown fields
// and unknown schemas are rejected.
func ReadSessionFile(path string) (SessionRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return SessionRecord{}, fmt.Errorf("%s: %w", path, ErrSessionNotFound)
		}
		return SessionRecord{}, err
	}
	var rec SessionRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		if json.Valid(data) {
			// Whole JSON this lifeloop cannot read (a field it does not
			// know): a record, perhaps of a newer lifeloop, not a torn one.
			return SessionRecord{}, fmt.Errorf("%s: not a session record this lifeloop reads: %w (upgrade lifeloop if a newer one wrote it)", path, err)
		}
		return SessionRecord{}, fmt.Errorf("%s: %w: %w", path, ErrNotARecord, err)
	}
	if rec.Schema != SessionSchemaV1 {
		return SessionRecord{}, fmt.Errorf("%s: unknown schema %q (want %s); upgrade lifeloop", path, rec.Schema, SessionSchemaV1)
	}
	if !rec.State.Valid() {
		return SessionRecord{}, fmt.Errorf("%s: invalid state %q", path, rec.State)
	}
	return rec, nil
}

// ListSessions returns the session records under root, newest first
// (by StartedAt, else UpdatedAt; ties by id, descending). A root or
// sessions folder that does not exist yields no sessions, and a session
// folder without session.json (still being created) is skipped. Sessions
// whose session.json cannot be read are left out and reported together in the
// returned error, alongside the records that could be read.
func ListSessions(root string) ([]SessionRecord, error) {
	entries, err := os.ReadDir(SessionsDir(root))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var recs []SessionRecord
	var problems []error
	for _, e := range entries {
		if !e.IsDir() || ValidateSessionID(e.Name()) != nil {
			continue
		}
		rec, err := ReadSessionFile(filepath.Join(SessionsDir(root), e.Name(), SessionFile))
		if errors.Is(err, ErrSessionNotFound) {
			continue // a session being created has its folder before its record
		}
		if err != nil {
			problems = append(problems, err)
			continue
		}
		recs = append(recs, rec)
	}
	sort.SliceStable(recs, func(i, j int) bool {
		ti, tj := sortTime(recs[i]), sortTime(recs[j])
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return recs[i].ID > recs[j].ID
	})
	return recs, errors.Join(problems...)
}

func sortTime(r SessionRecord) time.Time {
	if r.StartedAt != nil {
		return *r.StartedAt
	}
	return r.UpdatedAt
}

// Latest returns the newest session under root, or an error wrapping
// ErrSessionNotFound when there is none.
func Latest(root string) (SessionRecord, error) {
	recs, err := ListSessions(root)
	if len(recs) > 0 {
		return recs[0], nil
	}
	if err != nil {
		return SessionRecord{}, err
	}
	return SessionRecord{}, fmt.Errorf("no sessions in %s: %w", SessionsDir(root), ErrSessionNotFound)
}

package fleet

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Command is what a caller sends a machine's listener: an operation on
// one of its sessions (seed 001's abort, and lifeloop's pause, resume
// and renew with a note), named by an id of the caller's so that a command sent twice
// is done once.
type Command struct {
	ID       string    `json:"command_id"`
	Machine  string    `json:"machine"`
	Session  string    `json:"session_id"`
	Op       string    `json:"op"`
	Caller   string    `json:"caller,omitempty"`
	IssuedAt time.Time `json:"issued_at"`
	// Note (renew) is the text handed to the relaunched harness, as
	// `lifeloop renew --note` hands a file's; Resume asks a resumed
	// conversation instead of a fresh one.
	Note   string `json:"note,omitempty"`
	Resume bool   `json:"resume,omitempty"`
}

// MaxNote bounds a renew command's note.
const MaxNote = 64 << 10

// Ops are the operations a command may ask.
var Ops = []string{"abort", "pause", "resume", "renew"}

// Result statuses.
const (
	ResultDone    = "done"    // the session's wrapper took the operation
	ResultRefused = "refused" // not authorized, malformed, or for another machine
	ResultFailed  = "failed"  // authorized, but the session could not take it (ended, unknown, no wrapper)
)

// Result answers a command.
type Result struct {
	CommandID string `json:"command_id"`
	Machine   string `json:"machine"`
	Session   string `json:"session_id,omitempty"`
	Op        string `json:"op,omitempty"`
	Status    string `json:"status"`
	// State is the session's state the wrapper answered with (done).
	State   string `json:"state,omitempty"`
	Message string `json:"message,omitempty"`
	// Repeat: the command id was handled before; this is that answer.
	Repeat bool      `json:"repeat,omitempty"`
	At     time.Time `json:"at"`
}

// signed is a command on the wire: its JSON and the HMAC-SHA256 of that
// JSON under the machine's shared secret, hex.
type signed struct {
	Command   json.RawMessage `json:"command"`
	Signature string          `json:"signature"`
}

// Refusals of OpenCommand.
var (
	ErrNoSecret     = errors.New("this machine has no fleet secret: every command is refused (set LIFELOOP_FLEET_SECRET or --secret-file)")
	ErrBadSignature = errors.New("the command's signature does not match this machine's fleet secret")
)

var commandID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// Seal signs c with secret for the wire.
func Seal(c Command, secret []byte) ([]byte, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return json.Marshal(signed{Command: b, Signature: sign(b, secret)})
}

// OpenCommand checks a command from the wire: a known shape, a signature under
// secret (none configured: refused), a command id, an operation it knows.
// The command is returned as far as it could be read, also with an error,
// so that a refusal can name it.
func OpenCommand(body, secret []byte) (Command, error) {
	var s signed
	var c Command
	if err := json.Unmarshal(body, &s); err != nil || len(s.Command) == 0 {
		return c, fmt.Errorf("not a fleet command: %v", err)
	}
	if err := json.Unmarshal(s.Command, &c); err != nil {
		return c, fmt.Errorf("not a fleet command: %w", err)
	}
	if len(secret) == 0 {
		return c, ErrNoSecret
	}
	if !hmac.Equal([]byte(sign(s.Command, secret)), []byte(s.Signature)) {
		return c, ErrBadSignature
	}
	if !commandID.MatchString(c.ID) {
		return c, fmt.Errorf("command_id %q: want 1-128 letters, digits or ._:-", c.ID)
	}
	known := false
	for _, op := range Ops {
		known = known || c.Op == op
	}
	if !known {
		return c, fmt.Errorf("op %q: want one of %v", c.Op, Ops)
	}
	if len(c.Note) > MaxNote || c.Note != "" && c.Op != "renew" {
		return c, fmt.Errorf("a note goes with renew only, %d bytes at most", MaxNote)
	}
	return c, nil
}

func sign(b, secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// CommandQueue is the durable queue of machine's listener. Callers
// publish to it through the broker's default exchange (routing key = the
// queue's name), mandatory: a machine whose listener never ran has no
// queue, and the broker returns the command at once.
func CommandQueue(machine string) string { return "lifeloop.commands." + machine }

package control

// Refusal is an operation the wrapper declined for a reason a caller can
// act on, named by Code (one of the Code* constants) beside the message
// a person reads. A handler returns it; Call returns it, code intact, to
// the caller (errors.As).
type Refusal struct {
	Code    string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Refusal codes.
const (
	// CodeNotBetweenTurns refuses a renewal asked for between turns
	// (renewal.Request.BetweenTurns) while a turn is open, before any turn
	// ended, or after a key was typed since the latest turn opened:
	// nothing was recorded; ask again at the next safe moment.
	CodeNotBetweenTurns = "not_between_turns"
)

// Package callback invokes subprocess callback clients: one fresh child per
// dispatch, in its own process group, the DispatchEnvelope JSON on stdin
// and exactly one CallbackResponse JSON document on stdout.
//
// A client that misbehaves never crashes or hangs lifeloop: every
// misbehaviour becomes a *Failure with a contract failure class, a retry
// class, a warning code and a short message that never quotes the payload
// or the client's output. Whatever happens, no process of the client's
// group outlives the dispatch (the group is SIGKILLed at the end).
//
//	misbehaviour                                 failure class      retry class              code
//	-------------------------------------------  -----------------  -----------------------  ----------------------------
//	program missing or not executable            adapter_unavailable retry_after_reconfigure client_unavailable
//	runs past Timeout (group killed)             timeout            safe_retry               client_timeout
//	stdout over StdoutCap (group killed)         transport_error    retry_after_reconfigure  client_stdout_over_cap
//	non-zero exit or death by signal             transport_error    retry_after_reread       client_exit_nonzero
//	exits without consuming all of stdin         transport_error    safe_retry               client_stdin_unread
//	descendant holds stdout past ExitGrace       transport_error    retry_after_reread       client_stdout_held_open
//	stdout empty or not JSON                     transport_error    retry_after_reconfigure  client_response_malformed
//	more than one JSON document on stdout        invalid_request    do_not_retry             client_response_multiple
//	JSON that fails strict decoding/validation   invalid_request    do_not_retry             client_response_invalid
//
// Why these classes: the response is the client's half of the transport,
// so a broken exchange is a transport_error; its default retry posture
// (safe_retry) is kept where the client provably did nothing with the
// request (it never read it) and tightened, as the contract allows,
// where the client may have acted (non-zero exit, held stdout:
// retry_after_reread) or will fail the same way again (unparsable or
// oversized output: retry_after_reconfigure). A document that parses but
// breaks the schema is an invalid_request in the contract's sense — a
// request (here the client's reply) that failed schema validation — and
// blind retry would repeat it (do_not_retry). A program that cannot be
// started is a callback endpoint that cannot be reached or loaded:
// adapter_unavailable. Precedence when several apply follows the table's
// order (a timeout also shows as a death by signal, and is reported as the
// timeout).
//
// A client that answers with a well-formed status=failed response is not a
// misbehaviour: Invoke returns that response and a nil *Failure, and the
// caller turns the response's own failure and retry classes into the
// receipt.
package callback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// Defaults for the zero values of Invoker's limits.
const (
	DefaultTimeout   = 5 * time.Second
	DefaultStdoutCap = 1 << 20 // 1 MiB
	DefaultExitGrace = 500 * time.Millisecond
)

// Warning codes carried by Failure.Code.
const (
	CodeUnavailable       = "client_unavailable"
	CodeTimeout           = "client_timeout"
	CodeStdoutOverCap     = "client_stdout_over_cap"
	CodeExitNonzero       = "client_exit_nonzero"
	CodeStdinUnread       = "client_stdin_unread"
	CodeStdoutHeldOpen    = "client_stdout_held_open"
	CodeResponseMalformed = "client_response_malformed"
	CodeResponseMultiple  = "client_response_multiple"
	CodeResponseInvalid   = "client_response_invalid"
	CodeEnvelopeInvalid   = "dispatch_envelope_invalid"
)

// Invoker runs one callback client command. The zero value of each limit
// selects its default. An Invoker is safe for concurrent use: every
// Invoke starts its own child.
type Invoker struct {
	// Path is the client program; Args are its arguments.
	Path string
	Args []string
	// Timeout bounds one dispatch from start to the last byte of stdout
	// (default DefaultTimeout). When it passes, the whole process group is
	// killed.
	Timeout time.Duration
	// StdoutCap bounds the client's stdout in bytes (default
	// DefaultStdoutCap). Past it, the group is killed.
	StdoutCap int64
	// ExitGrace bounds how long stdout may stay open after the client
	// exits, e.g. held by a background descendant (default
	// DefaultExitGrace).
	ExitGrace time.Duration
	// Env is the client's base environment, e.g. os.Environ() chosen by
	// the caller; the package never reads the process environment. The
	// LIFELOOP_* variables below are appended to it.
	Env []string
	// SessionID, SessionDir and StateDir are passed to the client as
	// LIFELOOP_SESSION_ID, LIFELOOP_SESSION_DIR and LIFELOOP_STATE_DIR
	// (each only when non-empty).
	SessionID  string
	SessionDir string
	StateDir   string
	// Stderr receives the client's stderr (at most 1 MiB of it); nil
	// discards it. It is never copied into a Failure.
	Stderr io.Writer
}

// Name labels the client in messages: its program path.
func (inv *Invoker) Name() string { return inv.Path }

// Failure describes a client misbehaviour in contract terms. Message is
// short and never contains payload bodies or client output.
type Failure struct {
	Class   contract.FailureClass
	Retry   contract.RetryClass
	Code    string
	Message string
}

// Error implements error.
func (f *Failure) Error() string {
	return fmt.Sprintf("%s (%s, %s): %s", f.Code, f.Class, f.Retry, f.Message)
}

// Warning renders the failure as a receipt warning.
func (f *Failure) Warning() contract.Warning {
	return contract.Warning{Code: f.Code, Message: f.Message}
}

func fail(class contract.FailureClass, retry contract.RetryClass, code, format string, args ...any) *Failure {
	return &Failure{Class: class, Retry: retry, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invoke runs the client once with env on stdin and returns its validated
// response. It returns a non-nil *Failure instead when the client
// misbehaved (see the package table); it never panics on client output
// and never blocks much past Timeout+ExitGrace.
func (inv *Invoker) Invoke(ctx context.Context, env contract.DispatchEnvelope) (contract.CallbackResponse, *Failure) {
	stdin, err := json.Marshal(env)
	if err != nil {
		return contract.CallbackResponse{}, fail(contract.FailureInternalError, contract.FailureInternalError.DefaultRetry(),
			CodeEnvelopeInvalid, "encoding the dispatch envelope failed: %v", err)
	}
	stdin = append(stdin, '\n')
	lim := limits{timeout: inv.Timeout, stdoutCap: inv.StdoutCap, exitGrace: inv.ExitGrace, stderr: inv.Stderr}
	if lim.timeout <= 0 {
		lim.timeout = DefaultTimeout
	}
	if lim.stdoutCap <= 0 {
		lim.stdoutCap = DefaultStdoutCap
	}
	if lim.exitGrace <= 0 {
		lim.exitGrace = DefaultExitGrace
	}
	r := runChild(ctx, inv.Path, inv.Args, inv.environ(), stdin, lim)
	if f := classify(r, inv.Path, lim); f != nil {
		return contract.CallbackResponse{}, f
	}
	return decodeResponse(r.stdout)
}

func (inv *Invoker) environ() []string {
	env := make([]string, 0, len(inv.Env)+3)
	env = append(env, inv.Env...)
	for _, kv := range [][2]string{
		{"LIFELOOP_SESSION_ID", inv.SessionID},
		{"LIFELOOP_SESSION_DIR", inv.SessionDir},
		{"LIFELOOP_STATE_DIR", inv.StateDir},
	} {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	return env
}

// classify maps the process-level outcome to a Failure, in the package
// table's order of precedence.
func classify(r childResult, path string, lim limits) *Failure {
	switch {
	case r.startErr != nil:
		what := "cannot be started"
		if isNotFound(r.startErr) {
			what = "was not found"
		}
		return fail(contract.FailureAdapterUnavailable, contract.RetryAfterReconfigure, CodeUnavailable,
			"client %q %s; check the --client path and its permissions", path, what)
	case r.timedOut && errors.Is(r.ctxErr, context.Canceled):
		return fail(contract.FailureTimeout, contract.RetrySafe, CodeTimeout,
			"client %q was stopped because the dispatch was cancelled", path)
	case r.timedOut:
		return fail(contract.FailureTimeout, contract.RetrySafe, CodeTimeout,
			"client %q did not answer within %s; its process group was killed", path, lim.timeout)
	case r.overCap:
		return fail(contract.FailureTransportError, contract.RetryAfterReconfigure, CodeStdoutOverCap,
			"client %q wrote more than %d bytes to stdout; its process group was killed", path, lim.stdoutCap)
	case r.signaled:
		return fail(contract.FailureTransportError, contract.RetryAfterReread, CodeExitNonzero,
			"client %q was killed by a signal", path)
	case r.exitCode != 0:
		return fail(contract.FailureTransportError, contract.RetryAfterReread, CodeExitNonzero,
			"client %q exited with status %d", path, r.exitCode)
	case r.stdinUnread:
		return fail(contract.FailureTransportError, contract.RetrySafe, CodeStdinUnread,
			"client %q exited without reading the dispatch envelope on stdin", path)
	case r.heldOpen:
		return fail(contract.FailureTransportError, contract.RetryAfterReread, CodeStdoutHeldOpen,
			"client %q exited but a descendant kept stdout open past %s; its process group was killed", path, lim.exitGrace)
	}
	return nil
}

// decodeResponse strictly decodes exactly one CallbackResponse from out.
func decodeResponse(out []byte) (contract.CallbackResponse, *Failure) {
	var resp contract.CallbackResponse
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 {
		return resp, fail(contract.FailureTransportError, contract.RetryAfterReconfigure, CodeResponseMalformed,
			"client wrote nothing on stdout; it must print one CallbackResponse JSON document")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return resp, fail(contract.FailureTransportError, contract.RetryAfterReconfigure, CodeResponseMalformed,
			"client stdout is not a JSON document (%d bytes); it must print one CallbackResponse JSON document", len(trimmed))
	}
	if dec.More() || dec.InputOffset() != int64(len(trimmed)) {
		return resp, fail(contract.FailureInvalidRequest, contract.RetryDoNot, CodeResponseMultiple,
			"client printed more than one JSON document on stdout; it must print exactly one CallbackResponse")
	}
	resp, err := contract.DecodeCallbackResponse(first)
	if err != nil {
		return contract.CallbackResponse{}, fail(contract.FailureInvalidRequest, contract.RetryDoNot, CodeResponseInvalid,
			"client response is not a valid CallbackResponse: %s", shortErr(err))
	}
	return resp, nil
}

// shortErr bounds an error text so a message never grows with client
// output.
func shortErr(err error) string {
	s := err.Error()
	const max = 200
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

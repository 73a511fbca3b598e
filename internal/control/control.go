// Package control is the wire between a running session's wrapper and
// whoever asks it something: one line of JSON request, one line of JSON
// answer, over a unix socket in the session folder that only the
// session owner's uid may use. It holds the requests, answers and
// operations, the server the wrapper runs, the typed client the CLI and
// the session views use, and where the socket lives.
package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// Request is one line of JSON sent to a live wrapper's control
// socket. Op is one of the Op* constants; Args carries op-specific JSON.
type Request struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Response is the wrapper's one-line JSON answer.
type Response struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Code names why an operation was refused (a Refusal), when the
	// caller can act on it.
	Code   string          `json:"code,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

// Control operations.
const (
	OpStatus = "status"
	OpAbort  = "abort"
	OpPause  = "pause"
	OpResume = "resume"
	OpEmit   = "emit"
	OpHook   = "hook"
	OpRenew  = "renew"
)

// Handler answers one control request. It must not block for long:
// long operations (abort) start and answer at once.
type Handler func(ctx context.Context, req Request) (any, error)

// deadline bounds one control call (a renewal answers when it
// ends, within 3×grace plus a start).
const deadline = 60 * time.Second

// maxLine bounds one request line.
const maxLine = 4 << 20

// SocketEnv names the control socket in the harness's environment: its
// hooks, and anything it starts, reach the wrapper there.
const SocketEnv = "LIFELOOP_CONTROL_SOCKET"

// SocketFor returns where the control socket of session id under root
// lives.
func SocketFor(root, id string) string { return SocketIn(statedir.SessionDir(root, id)) }

// SocketIn returns the control socket of the session whose folder is
// dir: dir/control.sock, or — unix socket paths are limited to 108
// bytes — a socket under the temporary folder named after the session
// when that path would be too long.
func SocketIn(dir string) string {
	p := filepath.Join(dir, statedir.ControlSocket)
	if len(p) < 100 {
		return p
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("lifeloop-%d-%s.sock", os.Getuid(), filepath.Base(dir)))
}

// Status is what `lifeloop status` reports about a live session.
type Status struct {
	Session   statedir.SessionRecord `json:"session"`
	Alive     bool                   `json:"alive"`
	Processes int                    `json:"processes"`
	// RSSBytes and CPUSeconds are absent where the platform does not
	// measure them (macOS without libproc).
	RSSBytes    *uint64  `json:"rss_bytes,omitempty"`
	CPUSeconds  *float64 `json:"cpu_seconds,omitempty"`
	OutputBytes uint64   `json:"output_bytes"`
	IdleSeconds float64  `json:"idle_seconds"`
	Activity    string   `json:"activity"`
	Stopping    bool     `json:"stopping"`
	// Renewing is true while a renewal stops and starts the harness.
	Renewing bool `json:"renewing"`
	// Holding is what the session's stream holds back, in order, and why
	// (a session.started waiting for the harness to name its session, a
	// transcript moment waiting for the hook's report); empty when
	// nothing waits.
	Holding []Hold `json:"holding,omitempty"`
	// FrameOpen is true while a turn (a top-level frame) is under way.
	FrameOpen bool `json:"frame_open,omitempty"`
	// LastFrameEndedAt is when a turn last ended in the harness
	// conversation; LastKeyAt when a key was last typed at the person's
	// terminal (absent: none yet).
	LastFrameEndedAt *time.Time `json:"last_frame_ended_at,omitempty"`
	LastKeyAt        *time.Time `json:"last_key_at,omitempty"`
	// Attention is whether the session works or waits for a person, for
	// a harness whose signals tell (absent: none do).
	Attention *Attention `json:"attention,omitempty"`
	// Usage is the tokens and cost of the session's model calls so far,
	// in the shape of session.ended's usage block (docs/contract.md,
	// "Usage travels on frame ends"); absent before the first call, and
	// for a harness whose files record none.
	Usage map[string]any `json:"usage,omitempty"`
}

// Attention is a session's attention state (docs/attention.md): one of
// working, needs_permission, needs_answer, waiting_for_input,
// stopped_on_error, unknown; since when, from which source (hook,
// transcript, screen, frame), and what about.
//
// It carries the fields of the receipts' attention block
// (internal/attention.Block: since_epoch_ms, evidence, episode, turn,
// waited_ms per kind) counted at the moment status answers, so that
// status --json reads like the ledger's latest tick.
type Attention struct {
	State  string    `json:"state"`
	Since  time.Time `json:"since"`
	Source string    `json:"source,omitempty"`
	Detail string    `json:"detail,omitempty"`
	// WaitedSeconds is how long the session's episodes of waiting for a
	// person lasted in all, up to now for one that lasts.
	WaitedSeconds float64 `json:"waited_seconds"`
	// SinceEpochMs is Since in milliseconds, as the block has it.
	SinceEpochMs int64 `json:"since_epoch_ms,omitempty"`
	// Evidence names what set the state (a hook, a dialog, a frame).
	Evidence string `json:"evidence,omitempty"`
	// Episode is the open episode's ID (0 when the state is not a
	// waiting one); Turn the number of turns started so far.
	Episode int `json:"episode,omitempty"`
	Turn    int `json:"turn"`
	// WaitedMs is the waiting per kind so far, the open episode counted
	// up to now.
	WaitedMs map[string]int64 `json:"waited_ms,omitempty"`
}

// String says the state, its source and detail, and for how long it has
// held at now, in one line.
func (a Attention) String(now time.Time) string {
	s := a.State
	if a.Detail != "" {
		s += " (" + a.Detail + ")"
	}
	if a.Source != "" {
		s += " from " + a.Source
	}
	s += fmt.Sprintf(", for %.0f s; waited %.0f s in all", math.Max(now.Sub(a.Since).Seconds(), 0), a.WaitedSeconds)
	return s
}

// Hold is one moment the stream holds back.
type Hold struct {
	Event  contract.Event `json:"event"`
	Reason string         `json:"reason"`
	// SecondsLeft is how long it may still wait; absent for a moment that
	// only waits behind the ones held before it.
	SecondsLeft *float64 `json:"seconds_left,omitempty"`
}

// String says what is held, why and for how long, in one line.
func (h Hold) String() string {
	s := string(h.Event) + " held: " + h.Reason
	if h.SecondsLeft != nil {
		s += fmt.Sprintf(", %.0f s left", math.Ceil(*h.SecondsLeft))
	}
	return s
}

// EmitArgs are the arguments of the emit operation.
type EmitArgs struct {
	Event           contract.Event             `json:"event"`
	FrameID         string                     `json:"frame_id,omitempty"`
	ParentFrameID   string                     `json:"parent_frame_id,omitempty"`
	Payloads        []contract.PayloadEnvelope `json:"payloads,omitempty"`
	IdempotencyKey  string                     `json:"idempotency_key,omitempty"`
	TelemetryDetail map[string]any             `json:"telemetry_summary,omitempty"`
	// Degradations are the capability_degradations of the moment: a
	// capability.degraded needs at least one (a client's report that
	// something it provides stopped working, e.g. the renewal policy's).
	Degradations []contract.CapabilityDegradation `json:"capability_degradations,omitempty"`
}

// Server serves a unix socket in the session directory. Only peers
// with the wrapper's own uid are answered (SO_PEERCRED).
type Server struct {
	ln      *net.UnixListener
	path    string
	handler Handler
	log     *slog.Logger
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

// Listen creates the socket at path (mode 0600) and starts serving h.
// Close stops accepting and waits for in-flight requests.
func Listen(path string, h Handler, log *slog.Logger) (*Server, error) {
	_ = os.Remove(path) // a stale socket from a crashed wrapper
	old := unix.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ln: ln, path: path, handler: h, log: log, ctx: ctx, cancel: cancel}
	s.wg.Add(1)
	go s.accept() // exits when ln is closed
	return s, nil
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.AcceptUnix()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() { // exits when the request is answered or the deadline passes
			defer s.wg.Done()
			s.serve(conn)
		}()
	}
}

func (s *Server) serve(conn *net.UnixConn) {
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(deadline))
	if err := checkPeer(conn); err != nil {
		s.log.Warn("control: peer refused", "err", err)
		writeResponse(conn, Response{Error: err.Error()})
		return
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := readLimitedLine(r, maxLine)
	if err != nil {
		writeResponse(conn, Response{Error: "unreadable request: " + err.Error()})
		return
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		writeResponse(conn, Response{Error: "request is not JSON: " + err.Error()})
		return
	}
	// The call lives as long as its caller's connection: the deadline,
	// the caller hanging up or the server closing ends it, so an operation
	// the caller gave up on is never executed later.
	ctx, cancel := context.WithDeadline(s.ctx, time.Now().Add(deadline))
	defer cancel()
	go func() { // ends when the connection is closed (at the latest when serve returns)
		var b [1]byte
		_, _ = conn.Read(b[:])
		cancel()
	}()
	res, err := s.handler(ctx, req)
	if err != nil {
		resp := Response{Error: err.Error()}
		if r, ok := errors.AsType[*Refusal](err); ok {
			resp.Code = r.Code
		}
		writeResponse(conn, resp)
		return
	}
	raw, err := json.Marshal(res)
	if err != nil {
		writeResponse(conn, Response{Error: "internal: " + err.Error()})
		return
	}
	writeResponse(conn, Response{OK: true, Result: raw})
}

// Close stops the server, removes the socket file and waits for handlers.
// It is idempotent.
func (s *Server) Close() {
	s.cancel()
	_ = s.ln.Close()
	s.wg.Wait()
	_ = os.Remove(s.path)
}

func checkPeer(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var uid int
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = peerUID(int(fd)) }); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if uid != os.Getuid() {
		return fmt.Errorf("peer uid %d is not the session owner", uid)
	}
	return nil
}

func readLimitedLine(r *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return nil, err
		}
		out = append(out, chunk...)
		if len(out) > max {
			return nil, errors.New("request line too long")
		}
		if !isPrefix {
			return out, nil
		}
	}
}

func writeResponse(conn net.Conn, resp Response) {
	b, _ := json.Marshal(resp)
	_, _ = conn.Write(append(b, '\n'))
}

// ErrNotLive means no wrapper is serving the session's control socket.
var ErrNotLive = errors.New("no live lifeloop run owns this session")

// Call sends one request to the control socket at path and decodes the
// result into out (may be nil). It fails with ErrNotLive when nothing
// listens there.
func Call(ctx context.Context, path string, op string, args any, out any) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.ENOENT) {
			return ErrNotLive
		}
		return fmt.Errorf("control socket: %w", err)
	}
	defer func() { _ = conn.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	}
	req := Request{Op: op}
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			return err
		}
		req.Args = raw
	}
	b, _ := json.Marshal(req)
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	line, err := readLimitedLine(bufio.NewReader(conn), maxLine)
	if err != nil {
		return fmt.Errorf("control socket: no answer: %w", err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("control socket: bad answer: %w", err)
	}
	if !resp.OK {
		if resp.Code != "" {
			return &Refusal{Code: resp.Code, Message: resp.Error}
		}
		return errors.New(resp.Error)
	}
	if out != nil && len(resp.Result) > 0 {
		return json.Unmarshal(resp.Result, out)
	}
	return nil
}

// GetStatus asks the wrapper at path for its status (ErrNotLive when
// nothing listens there).
func GetStatus(ctx context.Context, path string) (Status, error) {
	var st Status
	err := Call(ctx, path, OpStatus, nil, &st)
	return st, err
}

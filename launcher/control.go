package launcher

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ControlRequest is one line of JSON sent to a live wrapper's control
// socket. Op is one of the Op* constants; Args carries op-specific JSON.
type ControlRequest struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// ControlResponse is the wrapper's one-line JSON answer.
type ControlResponse struct {
	OK     bool            `json:"ok"`
	Error  string          `json:"error,omitempty"`
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

// ControlHandler answers one control request. It must not block for long:
// long operations (abort) start and answer at once.
type ControlHandler func(ctx context.Context, req ControlRequest) (any, error)

// controlDeadline bounds one control call (a renewal answers when it
// ends, within 3×grace plus a start).
const controlDeadline = 60 * time.Second

// maxControlLine bounds one request line.
const maxControlLine = 4 << 20

// controlServer serves a unix socket in the session directory. Only peers
// with the wrapper's own uid are answered (SO_PEERCRED).
type controlServer struct {
	ln      *net.UnixListener
	path    string
	handler ControlHandler
	log     *slog.Logger
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

// listenControl creates the socket at path (mode 0600) and starts serving.
// Close stops accepting and waits for in-flight requests.
func listenControl(path string, h ControlHandler, log *slog.Logger) (*controlServer, error) {
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
	s := &controlServer{ln: ln, path: path, handler: h, log: log, ctx: ctx, cancel: cancel}
	s.wg.Add(1)
	go s.accept() // exits when ln is closed
	return s, nil
}

func (s *controlServer) accept() {
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

func (s *controlServer) serve(conn *net.UnixConn) {
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(controlDeadline))
	if err := checkPeer(conn); err != nil {
		s.log.Warn("control: peer refused", "err", err)
		writeResponse(conn, ControlResponse{Error: err.Error()})
		return
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := readLimitedLine(r, maxControlLine)
	if err != nil {
		writeResponse(conn, ControlResponse{Error: "unreadable request: " + err.Error()})
		return
	}
	var req ControlRequest
	if err := json.Unmarshal(line, &req); err != nil {
		writeResponse(conn, ControlResponse{Error: "request is not JSON: " + err.Error()})
		return
	}
	// The call lives as long as its caller's connection: the deadline,
	// the caller hanging up or the server closing ends it, so an operation
	// the caller gave up on is never executed later.
	ctx, cancel := context.WithDeadline(s.ctx, time.Now().Add(controlDeadline))
	defer cancel()
	go func() { // ends when the connection is closed (at the latest when serve returns)
		var b [1]byte
		_, _ = conn.Read(b[:])
		cancel()
	}()
	res, err := s.handler(ctx, req)
	if err != nil {
		writeResponse(conn, ControlResponse{Error: err.Error()})
		return
	}
	raw, err := json.Marshal(res)
	if err != nil {
		writeResponse(conn, ControlResponse{Error: "internal: " + err.Error()})
		return
	}
	writeResponse(conn, ControlResponse{OK: true, Result: raw})
}

// Close stops the server, removes the socket file and waits for handlers.
// It is idempotent.
func (s *controlServer) Close() {
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

func writeResponse(conn net.Conn, resp ControlResponse) {
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
	req := ControlRequest{Op: op}
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
	line, err := readLimitedLine(bufio.NewReader(conn), maxControlLine)
	if err != nil {
		return fmt.Errorf("control socket: no answer: %w", err)
	}
	var resp ControlResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("control socket: bad answer: %w", err)
	}
	if !resp.OK {
		return errors.New(resp.Error)
	}
	if out != nil && len(resp.Result) > 0 {
		return json.Unmarshal(resp.Result, out)
	}
	return nil
}

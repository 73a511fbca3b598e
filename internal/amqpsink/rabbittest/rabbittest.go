// Package rabbittest starts a private RabbitMQ broker for a test: the
// Debian package's server (`make broker` installs it), on free loopback
// ports, with every file under one temporary folder, its own Erlang port
// mapper (epmd) on a private port, and nothing left running afterwards.
// A test that needs the broker fails, never skips, when it is missing.
package rabbittest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ServerPath is the broker's start script as the Debian package installs
// it (run directly: the /usr/sbin wrapper switches to the rabbitmq user).
const ServerPath = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// StartTimeout bounds the broker's start (about 3 s on an idle machine,
// 8–13 s on a loaded one; a restart in the fleet tests missed 60 s at
// load ~30).
const StartTimeout = 120 * time.Second

// Broker is one private RabbitMQ node.
type Broker struct {
	// Dir holds the node's data, logs, config and Erlang cookie.
	Dir string
	// Port is the AMQP port on 127.0.0.1.
	Port int
	// URL is amqp://guest:guest@127.0.0.1:Port/ (guest works on loopback).
	URL      string
	distPort int
	epmdPort int
	cmd      *exec.Cmd
	waitErr  chan error
	log      *Buffer
	stopped  bool
	// lastExit is the node's wait status after Kill or Stop.
	lastExit error
}

// Start starts a broker for t and stops it (and its epmd) when t ends.
func Start(t testing.TB) *Broker {
	t.Helper()
	b, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// New starts a broker; Close stops it and removes its folder. A test
// binary may share one broker between its tests (TestMain).
func New() (*Broker, error) {
	if _, err := os.Stat(ServerPath); err != nil {
		return nil, fmt.Errorf("RabbitMQ is not installed (%s missing): run `make broker` (apt-get install rabbitmq-server)", ServerPath)
	}
	dir, err := os.MkdirTemp("", "lifeloop-rabbit-")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	b := &Broker{Dir: dir, Port: ports[0], distPort: ports[1], epmdPort: ports[2]}
	b.URL = fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", b.Port)
	for name, body := range map[string]string{
		"plugins":       "[].\n",
		"rabbitmq.conf": fmt.Sprintf("listeners.tcp.default = 127.0.0.1:%d\nloopback_users.guest = true\n", b.Port),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	if err := b.start(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close stops the broker and its epmd and removes its folder.
func (b *Broker) Close() {
	b.Stop()
	_ = os.RemoveAll(b.Dir)
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports, nil
}

func (b *Broker) env() []string {
	d := b.Dir
	return []string{
		"PATH=" + os.Getenv("PATH"),
		markerEnv + "=" + d,
		"HOME=" + d,
		"LANG=C.UTF-8",
		"RABBITMQ_NODENAME=lifeloop" + strconv.Itoa(b.Port) + "@localhost",
		"RABBITMQ_NODE_PORT=" + strconv.Itoa(b.Port),
		"RABBITMQ_DIST_PORT=" + strconv.Itoa(b.distPort),
		"ERL_EPMD_PORT=" + strconv.Itoa(b.epmdPort),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}",
		"RABBITMQ_MNESIA_BASE=" + filepath.Join(d, "mnesia"),
		"RABBITMQ_LOG_BASE=" + filepath.Join(d, "log"),
		"RABBITMQ_ENABLED_PLUGINS_FILE=" + filepath.Join(d, "plugins"),
		"RABBITMQ_CONFIG_FILE=" + filepath.Join(d, "rabbitmq"),
	}
}

// start starts the node on b's folder and ports and waits until it
// accepts connections.
func (b *Broker) start() error {
	b.log = &Buffer{}
	cmd := exec.Command(ServerPath) //nolint:noctx // it outlives this call; stopped by pid (Stop, Kill)
	cmd.Dir, cmd.Env = b.Dir, b.env()
	cmd.Stdout, cmd.Stderr = b.log, b.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start RabbitMQ: %w", err)
	}
	b.cmd, b.stopped = cmd, false
	b.waitErr = make(chan error, 1)
	go func() { b.waitErr <- cmd.Wait() }()
	deadline := time.Now().Add(StartTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-b.waitErr:
			b.waitErr <- err
			return fmt.Errorf("RabbitMQ exited while starting (%w):\n%s", err, b.log.String())
		default:
		}
		if c, err := dialPort(b.Port, 200*time.Millisecond); err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("RabbitMQ did not listen on 127.0.0.1:%d within %s:\n%s", b.Port, StartTimeout, b.log.String())
}

// Kill kills the node with SIGKILL (its process group), as a crash or a
// power cut would, and waits for it to be gone. Its folder stays.
func (b *Broker) Kill(t testing.TB) {
	t.Helper()
	if b.cmd == nil || b.stopped {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	b.lastExit = <-b.waitErr
	b.stopped = true
	b.waitPortClosed(b.Port)
	b.reap(false)
}

// Freeze stops the node (SIGSTOP to its process group): its
// connections stay open and nothing on them is answered, as a broker
// that hangs. The returned function lets it go on (SIGCONT); it also
// runs when t ends.
func (b *Broker) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	pid := b.cmd.Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill(2) returns once the signal is queued: the group stop begins
	// when a thread of each process takes it, and until then the others
	// run on (a loaded machine's broker answered a channel's opening
	// 0.5 ms after the kill). Wait until every thread of the group is
	// stopped.
	for deadline := time.Now().Add(10 * time.Second); !groupStopped(pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the broker's process group %d did not stop within 10 s", pid)
		}
	}
	var once sync.Once
	thaw = func() { once.Do(func() { _ = syscall.Kill(-pid, syscall.SIGCONT) }) }
	t.Cleanup(thaw)
	return thaw
}

// Restart starts the node again on the same folder and ports.
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	if err := b.start(); err != nil {
		t.Fatal(err)
	}
}

// Stop stops the node (SIGTERM to its process group; SIGKILL after 20 s)
// and then its epmd, and waits until both are gone.
func (b *Broker) Stop() {
	if b.cmd != nil && !b.stopped {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case err := <-b.waitErr:
			_ = err // stopped by our signal: its status says nothing
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
			b.lastExit = <-b.waitErr
		}
		b.stopped = true
		b.waitPortClosed(b.Port)
	}
	// This node's epmd is private (its own port): stopping it touches no
	// other Erlang node on the machine.
	if epmd, err := exec.LookPath("epmd"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, epmd, "-kill")
		cmd.Env = b.env()
		_ = cmd.Run()
	}
	b.waitPortClosed(b.epmdPort)
	b.reap(true)
}

// markerEnv is set in the broker's environment, which every process it
// starts inherits (beam, erl_child_setup, inet_gethost, epmd): it finds
// them all, whatever process group or session they moved to.
const markerEnv = "LIFELOOP_RABBITTEST_DIR"

// reap waits (up to 10 s) until no process of this broker is left —
// epmd only when withEpmd — and kills those still there.
func (b *Broker) reap(withEpmd bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := b.owned(withEpmd)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// owned lists the live processes that carry this broker's marker.
func (b *Broker) owned(withEpmd bool) []int {
	marker := []byte(markerEnv + "=" + b.Dir + "\x00")
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), marker) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && bytes.Contains(stat, []byte(") Z ")) {
			continue // a zombie waiting for its parent
		}
		if !withEpmd {
			if comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm"); string(bytes.TrimSpace(comm)) == "epmd" {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

func dialPort(port int, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	return d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

func (b *Broker) waitPortClosed(port int) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := dialPort(port, 100*time.Millisecond)
		if err != nil {
			return
		}
		_ = c.Close()
		time.Sleep(50 * time.Millisecond)
	}
}

// Buffer is a bytes.Buffer safe to write from one goroutine while
// another reads it: the node's output (written by the goroutines copying
// its stdout and stderr while start reads it for an error message), and
// the output of the programs the broker tests run.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// groupStopped reports whether every thread of every process in process
// group pgid is stopped (state T in /proc/<pid>/task/<tid>/stat).
func groupStopped(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		state, group, ok := procStat("/proc/" + e.Name() + "/stat")
		if !ok || group != pgid || state == 'Z' {
			continue
		}
		tasks, _ := os.ReadDir("/proc/" + e.Name() + "/task")
		for _, task := range tasks {
			if st, _, ok := procStat("/proc/" + e.Name() + "/task/" + task.Name() + "/stat"); ok && st != 'T' && st != 't' && st != 'Z' {
				return false
			}
		}
	}
	return true
}

// procStat reads the state and process group of a /proc stat file (the
// fields after the command's closing parenthesis: state, ppid, pgrp).
func procStat(path string) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	return f[0][0], g, err == nil
}

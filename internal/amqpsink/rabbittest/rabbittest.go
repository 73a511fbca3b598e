// Package rabbittest starts a private RabbitMQ broker for a test: the
// Debian package's server (`make broker` installs it), on free loopback
// ports, with every file under one temporary folder, its own Erlang port
// mapper (epmd) on a private port, and nothing left running afterwards.
// A test that needs the broker fails, never skips, when it is missing.
package rabbittest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// ServerPath is the broker's start script as the Debian package installs
// it (run directly: the /usr/sbin wrapper switches to the rabbitmq user).
const ServerPath = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// StartTimeout bounds the broker's start (about 3 s on an idle machine,
// 8–13 s on a loaded one).
const StartTimeout = 60 * time.Second

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
	log      *bytes.Buffer
	stopped  bool
}

// Start starts a broker for t and stops it (and its epmd) when t ends.
func Start(t testing.TB) *Broker {
	t.Helper()
	if _, err := os.Stat(ServerPath); err != nil {
		t.Fatalf("RabbitMQ is not installed (%s missing): run `make broker` (apt-get install rabbitmq-server)", ServerPath)
	}
	dir, err := os.MkdirTemp("", "lifeloop-rabbit-")
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	b := &Broker{Dir: dir, Port: ports[0], distPort: ports[1], epmdPort: ports[2]}
	b.URL = fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", b.Port)
	for name, body := range map[string]string{
		"plugins":       "[].\n",
		"rabbitmq.conf": fmt.Sprintf("listeners.tcp.default = 127.0.0.1:%d\nloopback_users.guest = true\n", b.Port),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		b.Stop(t)
		_ = os.RemoveAll(dir)
	})
	b.start(t)
	return b
}

func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

func (b *Broker) env() []string {
	d := b.Dir
	return []string{
		"PATH=" + os.Getenv("PATH"),
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
func (b *Broker) start(t testing.TB) {
	t.Helper()
	b.log = &bytes.Buffer{}
	cmd := exec.Command(ServerPath)
	cmd.Dir, cmd.Env = b.Dir, b.env()
	cmd.Stdout, cmd.Stderr = b.log, b.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start RabbitMQ: %v", err)
	}
	b.cmd, b.stopped = cmd, false
	b.waitErr = make(chan error, 1)
	go func() { b.waitErr <- cmd.Wait() }()
	deadline := time.Now().Add(StartTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-b.waitErr:
			b.waitErr <- err
			t.Fatalf("RabbitMQ exited while starting (%v):\n%s", err, b.log.String())
		default:
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", b.Port), 200*time.Millisecond); err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("RabbitMQ did not listen on 127.0.0.1:%d within %s:\n%s", b.Port, StartTimeout, b.log.String())
}

// Kill kills the node with SIGKILL (its process group), as a crash or a
// power cut would, and waits for it to be gone. Its folder stays.
func (b *Broker) Kill(t testing.TB) {
	t.Helper()
	if b.cmd == nil || b.stopped {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	<-b.waitErr
	b.stopped = true
	b.waitPortClosed(b.Port)
}

// Restart starts the node again on the same folder and ports.
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	b.start(t)
}

// Stop stops the node (SIGTERM to its process group; SIGKILL after 20 s)
// and then its epmd, and waits until both are gone.
func (b *Broker) Stop(t testing.TB) {
	if b.cmd != nil && !b.stopped {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-b.waitErr:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
			<-b.waitErr
		}
		b.stopped = true
		b.waitPortClosed(b.Port)
	}
	// This node's epmd is private (its own port): stopping it touches no
	// other Erlang node on the machine.
	if epmd, err := exec.LookPath("epmd"); err == nil {
		cmd := exec.Command(epmd, "-kill")
		cmd.Env = b.env()
		_ = cmd.Run()
	}
	b.waitPortClosed(b.epmdPort)
}

func (b *Broker) waitPortClosed(port int) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond)
		if err != nil {
			return
		}
		_ = c.Close()
		time.Sleep(50 * time.Millisecond)
	}
}

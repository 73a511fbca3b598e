package amqpsink

import (
	"net"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// CallTimeout bounds one exchange with the broker that waits for its
// answer (a channel's opening, a declare, a close).
const CallTimeout = 10 * time.Second

// Conn is a broker connection whose waits are bounded. The client's
// calls (Channel, the declares, Confirm, Close) wait for the broker's
// answer with no deadline of their own: a broker that holds a
// connection open without answering it — a resource alarm stops it
// reading a publishing connection, a restart caught half-way — would
// hold the caller for ever, and with it a session's publisher or the
// machine's listener. Within closes the socket when a call outlives its
// bound, which fails every call that waits on the connection; the
// caller then dials again as it does after any broker failure.
type Conn struct {
	*amqp.Connection
	mu  sync.Mutex
	raw net.Conn
}

// Dial connects to t, the TCP connection and the AMQP handshake bounded
// by timeout; name is the connection's name in the broker's views and
// heartbeat its heartbeat interval (0: the broker's).
func Dial(t Target, name string, heartbeat, timeout time.Duration) (*Conn, error) {
	c := &Conn{}
	dial := amqp.DefaultDial(timeout)
	conn, err := amqp.DialConfig(t.DialURL, amqp.Config{
		Heartbeat:  heartbeat,
		Properties: amqp.Table{"connection_name": name},
		Dial: func(network, addr string) (net.Conn, error) {
			raw, err := dial(network, addr)
			c.mu.Lock()
			c.raw = raw
			c.mu.Unlock()
			return raw, err
		},
	})
	if err != nil {
		return nil, err
	}
	c.Connection = conn
	return c, nil
}

// Within runs fn, a call (or calls) on this connection, and closes the
// socket if it has not returned after d: fn's waits then end with an
// error and the connection is gone.
func (c *Conn) Within(d time.Duration, fn func() error) error {
	t := time.AfterFunc(d, c.cut)
	defer t.Stop()
	return fn()
}

// cut closes the socket under the client, which sees the connection
// lost.
func (c *Conn) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw != nil {
		_ = c.raw.Close()
	}
}

// Close closes the connection, waiting at most CallTimeout for the
// broker's answer.
func (c *Conn) Close() error {
	return c.Within(CallTimeout, c.Connection.Close)
}
